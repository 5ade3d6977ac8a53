package io.gradsync.sync.verify;

import io.gradsync.sync.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/** Fills host memory with random gradient values in [-1, 1), stored in the given dtype. */
public final class RandomGradients {
    private RandomGradients() {
    }

    public static void fill(DType dtype, MemorySegment segment, long count, SplittableRandom random) {
        for (long i = 0; i < count; i++) {
            float v = (float) (random.nextDouble() * 2 - 1);
            switch (dtype) {
                case FP32 -> segment.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, v);
                case BF16 -> segment.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, (short) (Float.floatToRawIntBits(v) >>> 16));
                case FP16 -> segment.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float.floatToFloat16(v));
            }
        }
    }
}
