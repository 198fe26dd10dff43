/// mimalloc instead of glibc's malloc: the pipeline allocates a game's records on the replay
/// threads and frees them on the writer's, which glibc handles poorly (masters-1: `pawndex index`
/// 11% less wall time, `--parquet` 11% less; bench/README.md). SQLite keeps glibc's malloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(pawndex::cli::main_with_args());
}
