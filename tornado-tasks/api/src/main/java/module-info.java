/**
 * What kernel authors import: off-heap arrays, {@code @Parallel}, {@code KernelContext},
 * {@code Atomics}, {@code TaskGraph}, {@code WorkerGrid}. The JDK alone.
 *
 * <p>Kernels in a named module of yours: {@code opens} their package to {@code io.gradsync.tasks.api},
 * the one gradsync module that reads users' classes reflectively (method references, constants,
 * kernels run as Java).
 */
@SuppressWarnings("module") // the modules named in "exports ... to" are built after this one
module io.gradsync.tasks.api {
    exports io.gradsync.tasks.api;
    // how gradsync's own modules reach each other's internals, and users' classes: not for users
    exports io.gradsync.tasks.internal to io.gradsync.tasks.compiler, io.gradsync.tasks.runtime, io.gradsync.tasks.kernels;
}
