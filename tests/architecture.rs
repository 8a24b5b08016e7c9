//! The layered core: teaagent-core's imports form no circle, and each points down the floors that
//! `ARCHITECTURE.md` lists.
//!
//! Every file of `teaagent-core/src` is parsed (with its `#[cfg(test)]` modules: tests count). Each
//! path it names that leads into the crate — `use` trees, and `crate::`/`super::`/`self::` or
//! child-module paths in code — is resolved, through re-exports, to the file that defines the item.
//! That gives a graph of files. The test fails on a circle in it (naming the files and one import
//! of each tie), and on an import from a floor to a higher one (naming both files and the floors).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module path from the crate root: `["server", "http"]`.
type ModPath = Vec<String>;

#[derive(Default)]
struct Module {
    /// The file the module's items are written in.
    file: PathBuf,
    /// Items defined here (types, functions, traits, constants, macros).
    items: BTreeSet<String>,
    /// Child modules, file-backed or inline.
    children: BTreeSet<String>,
    /// Names brought in by `use`, each with the absolute path it stands for.
    aliases: BTreeMap<String, ModPath>,
    /// `use path::*`: absolute module paths whose names are visible here.
    globs: Vec<ModPath>,
}

/// One reference from a file: the absolute path it names, and where (for the message).
struct Reference {
    from: PathBuf,
    path: ModPath,
    line: usize,
}

struct Crate {
    root: PathBuf,
    modules: BTreeMap<ModPath, Module>,
    references: Vec<Reference>,
}

fn core_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../teaagent-core/src")
}

impl Crate {
    fn load(root: &Path) -> Crate {
        let mut krate = Crate { root: root.to_path_buf(), modules: BTreeMap::new(), references: Vec::new() };
        krate.load_file(&root.join("lib.rs"), Vec::new());
        krate
    }

    /// Parses one file as module `at`, then the files of the modules it declares.
    fn load_file(&mut self, file: &Path, at: ModPath) {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // Where `mod x;` finds x: next to lib.rs / mod.rs, else in the directory named for this file.
        let dir = if at.is_empty() || file.file_name().is_some_and(|n| n == "mod.rs") {
            file.parent().expect("a file has a directory").to_path_buf()
        } else {
            file.with_extension("")
        };
        let mut collector =
            Collector { krate: self, file: file.to_path_buf(), dir, at: vec![at], pending: Vec::new() };
        collector.module_items(&parsed.items);
        let pending = std::mem::take(&mut collector.pending);
        for (child_file, child_at) in pending {
            self.load_file(&child_file, child_at);
        }
    }

    fn module(&mut self, at: &ModPath, file: &Path) -> &mut Module {
        self.modules
            .entry(at.clone())
            .or_insert_with(|| Module { file: file.to_path_buf(), ..Module::default() })
    }

    /// The file that defines what `path` names, following re-exports; `None` for what lies outside the
    /// crate or cannot be told apart (a method, an enum variant's field: the walk stops at the item).
    fn resolve(&self, path: &[String], depth: usize) -> Option<PathBuf> {
        if depth > 32 {
            return None;
        }
        let mut at: ModPath = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            let module = self.modules.get(&at)?;
            if module.children.contains(segment) {
                at.push(segment.clone());
                continue;
            }
            if module.items.contains(segment) {
                return Some(module.file.clone());
            }
            if let Some(target) = module.aliases.get(segment) {
                let mut full = target.clone();
                full.extend(path[i + 1..].iter().cloned());
                return self.resolve(&full, depth + 1);
            }
            for glob in &module.globs {
                let mut full = glob.clone();
                full.extend(path[i..].iter().cloned());
                if let Some(found) = self.resolve(&full, depth + 1) {
                    return Some(found);
                }
            }
            return None;
        }
        // The path names a module: its file.
        self.modules.get(&at).map(|m| m.file.clone())
    }

    fn relative(&self, file: &Path) -> String {
        file.strip_prefix(&self.root).unwrap_or(file).display().to_string()
    }
}

struct Collector<'a> {
    krate: &'a mut Crate,
    file: PathBuf,
    dir: PathBuf,
    /// The module being read, innermost last (inline modules push).
    at: Vec<ModPath>,
    pending: Vec<(PathBuf, ModPath)>,
}

impl Collector<'_> {
    fn here(&self) -> ModPath {
        self.at.last().expect("the crate root is always there").clone()
    }

    fn module_items(&mut self, items: &[syn::Item]) {
        let here = self.here();
        let file = self.file.clone();
        self.krate.module(&here, &file);
        // Declarations first, so that paths through child modules resolve in any order.
        for item in items {
            let name = match item {
                syn::Item::Const(i) => Some(i.ident.to_string()),
                syn::Item::Enum(i) => Some(i.ident.to_string()),
                syn::Item::Fn(i) => Some(i.sig.ident.to_string()),
                syn::Item::Macro(i) => i.ident.as_ref().map(|i| i.to_string()),
                syn::Item::Static(i) => Some(i.ident.to_string()),
                syn::Item::Struct(i) => Some(i.ident.to_string()),
                syn::Item::Trait(i) => Some(i.ident.to_string()),
                syn::Item::Type(i) => Some(i.ident.to_string()),
                syn::Item::Union(i) => Some(i.ident.to_string()),
                _ => None,
            };
            if let Some(name) = name {
                self.krate.module(&here, &file).items.insert(name);
            }
            if let syn::Item::Mod(m) = item {
                let name = m.ident.to_string();
                self.krate.module(&here, &file).children.insert(name.clone());
                let mut child = here.clone();
                child.push(name.clone());
                if m.content.is_none() {
                    let explicit = m.attrs.iter().find_map(|a| match &a.meta {
                        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
                            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                            _ => None,
                        },
                        _ => None,
                    });
                    let child_file = match explicit {
                        Some(p) => self.dir.join(p),
                        None if self.dir.join(format!("{name}.rs")).exists() => {
                            self.dir.join(format!("{name}.rs"))
                        }
                        None => self.dir.join(&name).join("mod.rs"),
                    };
                    self.pending.push((child_file, child));
                }
            }
        }
        for item in items {
            match item {
                syn::Item::Use(u) => {
                    let mut prefix = Vec::new();
                    self.use_tree(&u.tree, &mut prefix);
                }
                syn::Item::Mod(m) => {
                    if let Some((_, content)) = &m.content {
                        let mut child = here.clone();
                        child.push(m.ident.to_string());
                        self.at.push(child);
                        self.module_items(content);
                        self.at.pop();
                    }
                }
                other => self.visit_item(other),
            }
        }
    }

    /// Records the names a `use` brings into the current module, and each as a reference.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                if name == "self" {
                    if let Some(last) = prefix.last().cloned() {
                        self.bring(prefix.clone(), last, n.ident.span().start().line);
                    }
                } else {
                    let mut path = prefix.clone();
                    path.push(name.clone());
                    self.bring(path, name, n.ident.span().start().line);
                }
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                self.bring(path, r.rename.to_string(), r.ident.span().start().line);
            }
            syn::UseTree::Glob(g) => {
                if let Some(absolute) = self.absolute(prefix) {
                    let here = self.here();
                    let file = self.file.clone();
                    self.krate.module(&here, &file).globs.push(absolute.clone());
                    self.krate.references.push(Reference {
                        from: file,
                        path: absolute,
                        line: g.star_token.span.start().line,
                    });
                }
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(tree, prefix);
                }
            }
        }
    }

    fn bring(&mut self, path: Vec<String>, name: String, line: usize) {
        if let Some(absolute) = self.absolute(&path) {
            let here = self.here();
            let file = self.file.clone();
            self.krate.module(&here, &file).aliases.insert(name, absolute.clone());
            self.krate.references.push(Reference { from: file, path: absolute, line });
        }
    }

    /// The absolute path a written path stands for, when it leads into the crate.
    fn absolute(&self, path: &[String]) -> Option<ModPath> {
        let first = path.first()?;
        let here = self.here();
        let mut out = match first.as_str() {
            "crate" | "teaagent_core" => Vec::new(),
            "self" => here.clone(),
            "super" => {
                let mut up = here.clone();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    up.pop();
                    rest = &rest[1..];
                }
                up.extend(rest.iter().cloned());
                return Some(up);
            }
            _ => {
                // A child module of this one named bare, or a name a `use` brought in.
                let module = self.krate.modules.get(&here)?;
                let mut out = if module.children.contains(first) {
                    let mut out = here.clone();
                    out.push(first.clone());
                    out
                } else {
                    module.aliases.get(first)?.clone()
                };
                out.extend(path[1..].iter().cloned());
                return Some(out);
            }
        };
        out.extend(path[1..].iter().cloned());
        Some(out)
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // Modules inside functions or blocks do not occur here; inline modules are walked by
        // `module_items`.
        if let Some((_, content)) = &m.content {
            let mut child = self.here();
            child.push(m.ident.to_string());
            self.at.push(child);
            self.module_items(content);
            self.at.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        // A `use` inside a function body: its names are local, but it is an import all the same.
        let mut prefix = Vec::new();
        let here = self.here();
        let saved = self.krate.modules.get(&here).map(|m| m.aliases.clone());
        self.use_tree(&u.tree, &mut prefix);
        if let (Some(saved), Some(module)) = (saved, self.krate.modules.get_mut(&here)) {
            module.aliases = saved;
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1
            && let Some(absolute) = self.absolute(&segments)
        {
            let line = path.segments[0].ident.span().start().line;
            self.krate.references.push(Reference { from: self.file.clone(), path: absolute, line });
        }
        syn::visit::visit_path(self, path);
    }
}

/// Floors from ARCHITECTURE.md's table: rows `| N | name | `module`, `module::sub` | … |`.
fn floors() -> Vec<(ModPath, usize)> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md");
    let text = std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
    let mut out = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let Ok(floor) = cells[1].parse::<usize>() else { continue };
        for module in cells[3].split(',') {
            let module = module.trim().trim_matches('`');
            if module.is_empty() {
                continue;
            }
            let path =
                if module == "lib" { Vec::new() } else { module.split("::").map(String::from).collect() };
            out.push((path, floor));
        }
    }
    assert!(out.len() > 5, "ARCHITECTURE.md's floor table was not found (rows `| N | name | `module`, … |`)");
    out
}

/// The floor of a module: that of the longest listed prefix.
fn floor_of(floors: &[(ModPath, usize)], module: &[String]) -> Option<usize> {
    floors
        .iter()
        // The crate root (`lib`) is its own floor; it is no prefix of the modules below it.
        .filter(|(prefix, _)| if prefix.is_empty() { module.is_empty() } else { module.starts_with(prefix) })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, floor)| *floor)
}

struct Graph {
    /// file → (file it imports → the first import's line).
    edges: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>,
}

fn graph(krate: &Crate) -> Graph {
    let mut edges: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> = BTreeMap::new();
    for file in krate.modules.values().map(|m| m.file.clone()) {
        edges.entry(file).or_default();
    }
    for reference in &krate.references {
        let Some(to) = krate.resolve(&reference.path, 0) else { continue };
        // A child file is part of its parent module: what it takes from an ancestor's file
        // (`super::`) is no tie of its own.
        if module_of(krate, &reference.from).starts_with(&module_of(krate, &to)) {
            continue;
        }
        if to != reference.from {
            edges.entry(reference.from.clone()).or_default().entry(to).or_insert(reference.line);
        }
    }
    Graph { edges }
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(graph: &Graph) -> Vec<Vec<PathBuf>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on_stack: BTreeSet<&'g PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn connect<'g>(s: &mut State<'g>, v: &'g PathBuf) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.edges[v].keys() {
            if !s.index.contains_key(w) {
                connect(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().expect("v is on the stack");
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.edges.keys() {
        if !state.index.contains_key(v) {
            connect(&mut state, v);
        }
    }
    state.out
}

fn module_of(krate: &Crate, file: &Path) -> ModPath {
    krate
        .modules
        .iter()
        .filter(|(_, m)| m.file == file)
        .map(|(path, _)| path.clone())
        .min_by_key(Vec::len)
        .unwrap_or_default()
}

#[test]
fn teaagent_core_has_no_import_circle() {
    let krate = Crate::load(&core_src());
    let graph = graph(&krate);
    let circles = circles(&graph);
    let mut report = String::new();
    for circle in &circles {
        report.push_str(&format!("a circle of {} files:\n", circle.len()));
        for from in circle {
            for (to, line) in &graph.edges[from] {
                if circle.contains(to) {
                    report.push_str(&format!(
                        "  {}:{line} -> {}\n",
                        krate.relative(from),
                        krate.relative(to)
                    ));
                }
            }
        }
    }
    assert!(circles.is_empty(), "teaagent-core's imports go round in circles:\n{report}");
}

#[test]
fn the_crate_modules_form_no_circle_either() {
    // Each module of the crate's root (`server`, `policy`, …) taken whole: `config` using
    // `server` while `server` uses `config` is a circle even when no two files close it.
    let krate = Crate::load(&core_src());
    let files = graph(&krate);
    let top = |file: &PathBuf| {
        PathBuf::from(module_of(&krate, file).first().cloned().unwrap_or_else(|| "lib".into()))
    };
    let mut edges: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> = BTreeMap::new();
    let mut witness: BTreeMap<(PathBuf, PathBuf), String> = BTreeMap::new();
    for (from, tos) in &files.edges {
        edges.entry(top(from)).or_default();
        for (to, line) in tos {
            let (a, b) = (top(from), top(to));
            if a != b {
                edges.entry(a.clone()).or_default().insert(b.clone(), *line);
                witness
                    .entry((a, b))
                    .or_insert_with(|| format!("{}:{line} -> {}", krate.relative(from), krate.relative(to)));
            }
        }
    }
    let modules = Graph { edges };
    let circles = circles(&modules);
    let mut report = String::new();
    for circle in &circles {
        report.push_str(&format!("a circle of {} modules:\n", circle.len()));
        for from in circle {
            for to in modules.edges[from].keys().filter(|to| circle.contains(to)) {
                report.push_str(&format!("  {}\n", witness[&(from.clone(), to.clone())]));
            }
        }
    }
    assert!(circles.is_empty(), "teaagent-core's modules go round in circles:\n{report}");
}

#[test]
fn every_import_points_down_the_floors() {
    let krate = Crate::load(&core_src());
    let floors = floors();
    let graph = graph(&krate);
    let mut unplaced = BTreeSet::new();
    let mut upward = Vec::new();
    for (from, tos) in &graph.edges {
        let from_module = module_of(&krate, from);
        let Some(from_floor) = floor_of(&floors, &from_module) else {
            unplaced.insert(from_module.join("::"));
            continue;
        };
        for (to, line) in tos {
            let to_module = module_of(&krate, to);
            let Some(to_floor) = floor_of(&floors, &to_module) else {
                unplaced.insert(to_module.join("::"));
                continue;
            };
            if to_floor > from_floor {
                upward.push(format!(
                    "  {}:{line} (floor {from_floor}) imports {} (floor {to_floor})",
                    krate.relative(from),
                    krate.relative(to)
                ));
            }
        }
    }
    assert!(unplaced.is_empty(), "modules on no floor of ARCHITECTURE.md: {unplaced:?}");
    assert!(upward.is_empty(), "imports that point up:\n{}", upward.join("\n"));
}

#[test]
fn the_checker_sees_imports_and_circles() {
    // The checker on a crate of its own making: a circle through `super::`, a re-export and a
    // path in code must be found, or the tests above could pass by seeing nothing.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "pub mod a;\npub mod b;\npub use a::Alpha;\n").expect("written");
    std::fs::create_dir(src.join("a")).expect("written");
    std::fs::write(src.join("a.rs"), "mod inner;\npub use inner::Alpha;\npub struct Top;\n")
        .expect("written");
    std::fs::write(src.join("a/inner.rs"), "pub struct Alpha(super::Top);\n").expect("written");
    std::fs::write(src.join("b.rs"), "pub fn f() -> usize { std::mem::size_of::<crate::Alpha>() }\n")
        .expect("written");
    let krate = Crate::load(src);
    let graph = graph(&krate);
    let b = src.join("b.rs");
    let inner = src.join("a/inner.rs");
    assert!(
        graph.edges[&b].contains_key(&inner),
        "the path in code, through two re-exports: {:?}",
        graph.edges[&b]
    );
    assert!(!graph.edges[&inner].contains_key(&src.join("a.rs")), "a child's `super::` is no tie");
    assert!(circles(&graph).is_empty());
    // A circle between siblings is one.
    std::fs::write(
        src.join("b.rs"),
        "pub fn f() -> usize { std::mem::size_of::<crate::Alpha>() }\npub struct Beta;\n",
    )
    .expect("written");
    std::fs::write(src.join("a/inner.rs"), "pub struct Alpha(crate::b::Beta);\n").expect("written");
    let krate = Crate::load(src);
    assert_eq!(circles(&self::graph(&krate)), vec![vec![inner, b]]);
}
