package io.gradsync.tasks.api;

/**
 * When a graph's transfer runs: on the plan's first execution only, or on every execution.
 *
 * <p>Immutable: safe to share between threads.
 */
public enum DataTransferMode {
    /** Data that does not change between runs (it stays on the device). */
    FIRST_EXECUTION,
    /** Data the host changes, or needs back, every run. */
    EVERY_EXECUTION
}
