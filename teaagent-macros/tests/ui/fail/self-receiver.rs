use teaagent_core::tool;

struct Files;

impl Files {
    /// Read a file.
    #[tool(read_only)]
    fn read(&self, path: String) -> String {
        path
    }
}

fn main() {}
