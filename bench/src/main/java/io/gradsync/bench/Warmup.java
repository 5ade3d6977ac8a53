package io.gradsync.bench;

/**
 * Untimed calls before a measurement. A handful is not enough: the first calls run the Java call
 * path (planning, bucket bookkeeping) in the interpreter, tens of microseconds that a training
 * loop pays only in its first steps, and would count against the small sizes measured first. So
 * the warm-up lasts at least {@link #MIN_NANOS} in one process, and then until the calls stop
 * getting faster ({@link #untilSteady}): a host average whose SIMD lanes are not compiled yet runs
 * tens of times slower, and 0.3 s of such calls is only a few of them. Processes of one
 * collective must make the same calls, so there the count comes from the bytes instead of the clock.
 */
public final class Warmup {
    /** One process: warm up at least this long (the JIT compiles the hot call path well within it). */
    static final long MIN_NANOS = 300_000_000L;
    /** Several processes: at least this many bytes of calls, the same count on every rank. */
    static final long MULTI_PROCESS_BYTES = 2L << 30;
    /** Never more calls than this, whatever the clock says. */
    static final int MAX_CALLS = 20_000;

    private Warmup() {
    }

    /** What {@link #run} will do, for report headers: {@code ">= 3 calls and 0.3 s per size"}. */
    public static String describe(boolean oneProcess, int minCalls) {
        return ">= " + minCalls + (minCalls == 1 ? " call" : " calls") + " and "
                + (oneProcess ? MIN_NANOS / 1e9 + " s, then until steady," : (MULTI_PROCESS_BYTES >> 30) + " GiB") + " per size";
    }

    /**
     * Runs {@code call} at least {@code minCalls} times, then more as described above.
     *
     * @param oneProcess   every replica is in this process (time-based); else count-based
     * @param bytesPerCall bytes one call averages per replica
     * @return the calls made
     */
    public static int run(boolean oneProcess, int minCalls, long bytesPerCall, Runnable call) {
        if (minCalls < 0 || bytesPerCall < 1) {
            throw new IllegalArgumentException("warm-up needs calls >= 0 and bytes >= 1, got " + minCalls + " and " + bytesPerCall);
        }
        if (oneProcess) {
            return untilSteady(minCalls, STEADY_BATCH, call);
        }
        long target = Math.max(minCalls, Math.min(MAX_CALLS, (MULTI_PROCESS_BYTES + bytesPerCall - 1) / bytesPerCall));
        for (int i = 0; i < target; i++) {
            call.run();
        }
        return (int) target;
    }

    /** Runs {@code call} at least {@code minCalls} times and for at least 0.3 s (at most 20,000 calls); returns the calls made. */
    public static int forTime(int minCalls, Runnable call) {
        if (minCalls < 0) {
            throw new IllegalArgumentException("warm-up needs calls >= 0, got " + minCalls);
        }
        int calls = 0;
        long start = System.nanoTime();
        while (calls < minCalls || (System.nanoTime() - start < MIN_NANOS && calls < MAX_CALLS)) {
            call.run();
            calls++;
        }
        return calls;
    }

    /** Calls per batch of {@link #untilSteady} in {@link #run}. */
    static final int STEADY_BATCH = 5;
    /** Steady-state warm-up: stop when batch medians have not improved by 5% for this long... */
    static final long STEADY_NANOS = 500_000_000L;
    /** ...or after this long. */
    static final long STEADY_MAX_NANOS = 5_000_000_000L;

    /**
     * As {@link #forTime}, then batches of {@code batch} calls until no batch's median time has
     * been 5% better than the best before it for 0.5 s (at most 5 s more): for Java code that C2
     * compiles in stages, late where every core runs the code it compiles, so that the compiled
     * form can come after the first 0.3 s. Returns the calls made.
     */
    public static int untilSteady(int minCalls, int batch, Runnable call) {
        int calls = forTime(minCalls, call);
        long start = System.nanoTime();
        long improved = start;
        double best = Double.POSITIVE_INFINITY;
        long[] nanos = new long[Math.max(1, batch)];
        for (long now = start; now - improved < STEADY_NANOS && now - start < STEADY_MAX_NANOS && calls < MAX_CALLS; ) {
            for (int i = 0; i < nanos.length; i++) {
                long t0 = System.nanoTime();
                call.run();
                nanos[i] = System.nanoTime() - t0;
            }
            calls += nanos.length;
            java.util.Arrays.sort(nanos);
            now = System.nanoTime();
            if (nanos[nanos.length / 2] < (1 - 0.05) * best) {
                best = nanos[nanos.length / 2];
                improved = now;
            }
        }
        return calls;
    }
}
