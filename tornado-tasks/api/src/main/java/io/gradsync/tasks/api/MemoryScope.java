package io.gradsync.tasks.api;

/**
 * Which threads an {@link Atomics} operation is atomic for and ordered with: the threads of one
 * work group, of one device, or of every device and the host (system: memory that other GPUs or
 * the host read and write, as the flags of a cross-GPU all-reduce). On OpenCL devices, whose C
 * 1.2 atomics have no scopes, every scope is the device's. On the JVM every scope is the process's.
 */
public enum MemoryScope {
    GROUP, DEVICE, SYSTEM
}
