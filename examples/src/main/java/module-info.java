/**
 * A user's program: it may use only what gradsync exports (the compiler holds it to that), plus
 * its own CUDA library.
 */
@SuppressWarnings("requires-automatic") // JCuda and JOCL publish no module descriptor of their own
module io.gradsync.examples {
    requires transitive io.gradsync.sync;
    requires jcuda;

    exports io.gradsync.examples;
}
