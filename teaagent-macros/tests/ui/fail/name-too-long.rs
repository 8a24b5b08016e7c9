use teaagent_core::tool;

/// Look up the current weather forecast.
#[tool(read_only)]
fn look_up_the_current_weather_forecast_for_a_city_given_its_name_and_country() -> String {
    String::new()
}

/// Look up the current weather forecast.
#[tool(read_only, name = "weather-forecast-for-a-city-given-its-name-and-country-and-the-day")]
fn forecast() -> String {
    String::new()
}

fn main() {}
