package io.gradsync.sync.internal;

/**
 * How a device sums the squares of {@code n} values for the host: {@code wide} first-stage fp64
 * partials ({@code sumOfSquaresPartials*}, one thread each) added down on the device to
 * {@code host} partials ({@code sumPartials}) that the host adds in order; {@code wide} is 0 where
 * one stage straight into the host's partials does. The one policy of the ptx backend's fused sum
 * and of the bucket norm's second pass.
 *
 * @param wide first-stage partials, 0 for one stage
 * @param host partials copied to the host (32 KiB at most; 0 for no values)
 */
public record SquareSlots(int wide, int host) {
    /** Partials the host adds: 32 KiB per sum to copy back. */
    public static final int HOST_SLOTS = 4096;
    /** First-stage partials for a large sum: one thread each with 8 loads in flight fills an H200. */
    public static final int WIDE_SLOTS = 65536;
    /** A first-stage thread sums at least this many values: below that one stage does. */
    public static final int MIN_PER_WIDE_SLOT = 16;

    public static SquareSlots of(long values) {
        int host = (int) Math.min(HOST_SLOTS, values);
        int wide = (int) Math.min(WIDE_SLOTS, values / MIN_PER_WIDE_SLOT);
        return new SquareSlots(wide > HOST_SLOTS ? wide : 0, host);
    }
}
