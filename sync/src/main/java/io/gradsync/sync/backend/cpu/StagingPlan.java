package io.gradsync.sync.backend.cpu;

import io.gradsync.sync.DType;
import io.gradsync.sync.Gradient;
import java.util.ArrayList;
import java.util.List;

/**
 * How a replica's gradients are cut into pipeline chunks: each chunk fills one staging slot with
 * pieces of one or more gradients (small gradients share a slot), each piece 64-byte aligned in
 * the slot. A gradient that goes on into the next chunk is cut at a multiple of {@code cellBytes}
 * from its own start, so that it falls into the same cells whatever shares the call with it (sums
 * over cells then do not depend on that). Computed once per gradient layout and reused while the
 * layout stays the same.
 */
final class StagingPlan {

    /** {@code count} elements of gradient {@code gradient} from element {@code first}, at {@code slotOffset} in the slot. */
    record Piece(int gradient, long first, long count, DType dtype, long slotOffset) {
        long bytes() {
            return count * dtype.bytes();
        }
    }

    record Chunk(List<Piece> pieces) {
    }

    private final List<Gradient> layoutOf;
    private final List<Chunk> chunks;

    private StagingPlan(List<Gradient> layoutOf, List<Chunk> chunks) {
        this.layoutOf = layoutOf;
        this.chunks = chunks;
    }

    List<Chunk> chunks() {
        return chunks;
    }

    /** True when {@code gradients} have the counts and dtypes this plan was made for. */
    boolean fits(List<Gradient> gradients) {
        if (gradients == layoutOf) { // the very list (a replica's is immutable, and List.copyOf keeps it)
            return true;
        }
        if (gradients.size() != layoutOf.size()) {
            return false;
        }
        for (int i = 0; i < gradients.size(); i++) {
            Gradient a = gradients.get(i);
            Gradient b = layoutOf.get(i);
            if (a.count() != b.count() || a.dtype() != b.dtype()) {
                return false;
            }
        }
        return true;
    }

    /** @param cellBytes at most {@code slotBytes}, a multiple of every element size */
    static StagingPlan of(List<Gradient> gradients, long slotBytes, long cellBytes) {
        if (cellBytes <= 0 || cellBytes > slotBytes || cellBytes % 4 != 0) {
            throw new IllegalArgumentException("cells of " + cellBytes + " B in slots of " + slotBytes + " B");
        }
        List<Chunk> chunks = new ArrayList<>();
        List<Piece> pieces = new ArrayList<>();
        long used = 0;
        for (int g = 0; g < gradients.size(); g++) {
            Gradient grad = gradients.get(g);
            int size = grad.dtype().bytes();
            long cell = cellBytes / size;
            long done = 0;
            while (done < grad.count()) {
                long room = (slotBytes - used) / size;
                long n = Math.min(room, grad.count() - done);
                if (n < grad.count() - done) {
                    n -= n % cell; // it goes on in the next chunk: end on a cell boundary (done is one)
                }
                if (n <= 0) { // this slot is full
                    chunks.add(new Chunk(List.copyOf(pieces)));
                    pieces.clear();
                    used = 0;
                    continue;
                }
                pieces.add(new Piece(g, done, n, grad.dtype(), used));
                used = align64(used + n * size);
                done += n;
            }
        }
        if (!pieces.isEmpty()) {
            chunks.add(new Chunk(List.copyOf(pieces)));
        }
        return new StagingPlan(List.copyOf(gradients), List.copyOf(chunks));
    }

    private static long align64(long v) {
        return Math.min(Long.MAX_VALUE - 63, v + 63) & ~63L;
    }
}
