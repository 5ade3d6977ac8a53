package io.gradsync.tasks.api;

/**
 * The memory ordering of an {@link Atomics} operation, with the meanings of
 * {@link java.lang.invoke.VarHandle}'s access modes: {@code RELAXED} (atomic, no ordering),
 * {@code ACQUIRE} (later accesses stay after it: a flag read before the data it guards),
 * {@code RELEASE} (earlier accesses stay before it: the data written before its flag),
 * {@code ACQ_REL} (both) and {@code SEQ_CST} (one order all threads agree on).
 */
public enum MemoryOrder {
    RELAXED, ACQUIRE, RELEASE, ACQ_REL, SEQ_CST
}
