/**
 * The bridge from a {@link io.gradsync.tasks.compiler.CompiledKernel} to its IR and its
 * element-wise analysis, for gradsync's own launchers and tools (exported to them by name only).
 */
package io.gradsync.tasks.compiler.access;
