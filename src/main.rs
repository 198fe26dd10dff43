fn main() {
    std::process::exit(pawndex::cli::main_with_args());
}
