package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.api.KernelArray;
import io.gradsync.tasks.kernels.JvmFastForms.Chunk;
import io.gradsync.tasks.kernels.JvmFastForms.Type;
import io.gradsync.tasks.kernels.internal.Lanes;

import java.lang.foreign.MemorySegment;

import static io.gradsync.tasks.kernels.JvmFastForms.CHUNK;
import static io.gradsync.tasks.kernels.JvmFastForms.HALF;
import static io.gradsync.tasks.kernels.JvmFastForms.fits;

/**
 * The JVM fast forms of the conversions ({@link ConversionKernels}), a chunk at a time: fp16 through
 * a chunk's floats (the JDK's fp16 conversions, which C2 vectorizes); bf16 two elements at a time,
 * a 32-bit word of two bf16 beside a 64-bit long of two floats (in element order: little-endian,
 * which {@link JvmFastForms} requires), so that no pass reorders elements.
 */
final class ConversionJvmForm {
    private ConversionJvmForm() {
    }

    /** The form of conversion {@code name}, or null if it has none. */
    static JvmFastForm of(String name) {
        return switch (name) {
            case "f32ToBf16" -> ConversionJvmForm::toBf16;
            case "bf16ToF32" -> ConversionJvmForm::fromBf16;
            case "f16ToF32", "f32ToF16" -> ConversionJvmForm::convert;
            default -> null;
        };
    }

    /** {@code out[i] = in[i]} between fp16 and fp32, widened or rounded to nearest even as the arrays' {@code set}. */
    private static boolean convert(Object[] args) {
        KernelArray in = (KernelArray) args[0];
        KernelArray out = (KernelArray) args[1];
        if (!fits(out, in)) {
            return false;
        }
        Type from = Type.of(in);
        Type to = Type.of(out);
        Chunk c = Chunk.ofThisThread();
        for (int at = 0; at < out.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, out.getSize() - at);
            from.load(c, in.segment(), at, count, c.f, c.fView);
            to.store(c, out.segment(), at, count);
        }
        return true;
    }

    /**
     * {@code out[i]} = the bf16 nearest {@code in[i]} (ties to even, a NaN made quiet), as
     * {@code Bfloat16Array.set}: each long's two floats into one word.
     */
    private static boolean toBf16(Object[] args) {
        return inPairs(args, true);
    }

    /** {@code out[i]} = {@code in[i]} as a float (its bits in the upper half): each word's two bf16 into one long. */
    private static boolean fromBf16(Object[] args) {
        return inPairs(args, false);
    }

    /**
     * A bf16 conversion in SIMD lanes where there are ({@link Lanes}), else a chunk at a time: the input's elements into the chunk's longs (floats) or
     * words (bf16), {@link #narrow} or {@link #widen}, the other array out. An odd last element
     * leaves the upper half of the last long or word unused: it is not stored.
     */
    private static boolean inPairs(Object[] args, boolean narrowing) {
        KernelArray in = (KernelArray) args[0];
        KernelArray out = (KernelArray) args[1];
        if (!fits(out, in)) {
            return false;
        }
        if (Lanes.available()) {
            if (narrowing) {
                Lanes.f32ToBf16(in.segment(), out.segment(), out.getSize());
            } else {
                Lanes.bf16ToF32(in.segment(), out.segment(), out.getSize());
            }
            return true;
        }
        Chunk c = Chunk.ofThisThread();
        MemorySegment from = narrowing ? c.longsView : c.wordsView;
        MemorySegment to = narrowing ? c.wordsView : c.longsView;
        long inBytes = in.elementBytes();
        long outBytes = out.elementBytes();
        for (int at = 0; at < out.getSize(); at += CHUNK) {
            int count = Math.min(CHUNK, out.getSize() - at);
            MemorySegment.copy(in.segment(), inBytes * at, from, 0, inBytes * count);
            if (narrowing) {
                narrow(c.longs, c.words);
            } else {
                widen(c.words, c.longs);
            }
            MemorySegment.copy(to, 0, out.segment(), outBytes * at, outBytes * count);
        }
        return true;
    }

    private static void narrow(long[] floats, int[] words) {
        for (int p = 0; p < HALF; p++) {
            long two = floats[p];
            words[p] = (HalfFloats.bf16InHighHalf((int) two) >>> 16) | (HalfFloats.bf16InHighHalf((int) (two >>> 32)) & 0xFFFF_0000);
        }
    }

    private static void widen(int[] words, long[] floats) {
        for (int p = 0; p < HALF; p++) {
            int two = words[p];
            floats[p] = ((long) (two & 0xFFFF_0000) << 32) | ((two << 16) & 0xFFFF_FFFFL);
        }
    }
}
