package io.gradsync.sync;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where a synchronizer's time went since it was made (or last reset): calls that finished (every
 * collective: {@code synchronize}, {@code broadcast}, {@code reduceScatter}, {@code allGather} and
 * their asynchronous forms; calls refused for bad input are not counted), the bytes of each call's
 * replica layout (one replica's gradients whole, bucket padding included, whatever part of them the
 * collective moves), wall time inside the calls, and backend-specific phases. Phases measured on
 * worker threads add up over the workers, so they can exceed the wall time.
 *
 * <p>Thread-safety: every method may be called from any thread at any time (counters are adders).
 */
public final class SyncStats {
    private final LongAdder calls = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder wallNanos = new LongAdder();
    private final Map<String, LongAdder> phases = Collections.synchronizedMap(new LinkedHashMap<>());

    /** An empty tally; every synchronizer keeps one. */
    public SyncStats() {
    }

    /** Counts one finished call. */
    public void call(long replicaBytes, long nanos) {
        calls.increment();
        bytes.add(replicaBytes);
        wallNanos.add(nanos);
    }

    /** Adds time to a named phase; phases print in the order first seen. */
    public void phase(String name, long nanos) {
        phases.computeIfAbsent(name, k -> new LongAdder()).add(nanos);
    }

    public long calls() {
        return calls.sum();
    }

    public long bytes() {
        return bytes.sum();
    }

    public long wallNanos() {
        return wallNanos.sum();
    }

    /** Phase totals in nanoseconds, in first-seen order. */
    public Map<String, Long> phases() {
        Map<String, Long> copy = new LinkedHashMap<>();
        synchronized (phases) {
            phases.forEach((k, v) -> copy.put(k, v.sum()));
        }
        return copy;
    }

    public void reset() {
        calls.reset();
        bytes.reset();
        wallNanos.reset();
        synchronized (phases) {
            phases.clear();
        }
    }

    /** {@link #describe()}: what a log line shows. */
    @Override
    public String toString() {
        return describe();
    }

    /** One line: calls, mean time per call, and each phase's mean per call. */
    public String describe() {
        long c = Math.max(1, calls());
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%d calls, %.1f us/call", calls(),
                wallNanos() / 1e3 / c));
        phases().forEach((k, v) -> sb.append(String.format(Locale.ROOT, ", %s %.1f us", k, v / 1e3 / c)));
        return sb.toString();
    }
}
