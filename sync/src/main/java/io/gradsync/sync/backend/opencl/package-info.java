/**
 * Unexported: the {@code opencl} backend, the project's kernels as OpenCL C with slices moving through
 * host memory: its provider, coordinator, step plan, staging memory and prepared kernels and events.
 */
package io.gradsync.sync.backend.opencl;
