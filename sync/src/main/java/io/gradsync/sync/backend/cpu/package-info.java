/**
 * Unexported: the {@code cpu} backend, host staging: its provider, its coordinator, the chunk plan,
 * the pinned ring and its streams, the host workers, and the synchronous and asynchronous pipelines.
 */
package io.gradsync.sync.backend.cpu;
