/**
 * Unexported: the {@code ptx} backend, the project's kernels as PTX reading peer GPUs' memory: its
 * provider, coordinator, peer access, memory, layout cache, schedule, fused squares and launches.
 */
package io.gradsync.sync.backend.ptx;
