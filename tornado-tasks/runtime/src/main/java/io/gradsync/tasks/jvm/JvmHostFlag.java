package io.gradsync.tasks.jvm;

import io.gradsync.tasks.device.HostFlag;

/** A host flag of a JVM device: a monitor the stream's worker waits on. */
final class JvmHostFlag implements HostFlag {
    private int value;

    @Override
    public synchronized void raise(int v) {
        value = v;
        notifyAll();
    }

    @Override
    public synchronized int value() {
        return value;
    }

    /** Blocks the calling (stream worker) thread until the flag reaches {@code v}, modulo 2^32. */
    synchronized void awaitAtLeast(int v) {
        while (value - v < 0) {
            try {
                wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for a host flag", e);
            }
        }
    }

    @Override
    public void close() {
        // nothing native
    }
}
