/**
 * A user's program: it may use only what gradsync exports (the compiler holds it to that), plus
 * its own CUDA library.
 */
module io.gradsync.examples {
    requires transitive io.gradsync.sync;
    requires jcuda;

    exports io.gradsync.examples;
}
