package io.gradsync.sync.internal;

import io.gradsync.sync.DType;
import io.gradsync.tasks.kernels.internal.Quotients;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link HostAverage}'s average in SIMD lanes (the incubating {@code jdk.incubator.vector}), writing
 * the mean into every input at once: for the many small tensors of a model on JVM devices, where a
 * plain loop over several memory segments stays scalar (C2 cannot rule out that they overlap) and
 * a copy per replica costs as much as the sum. The same bits as {@link HostAverage#average}: the
 * float64 sum in replica order, divided by the count as {@link Quotients#byCount} does (the
 * product alone where the sum is infinite or NaN, or the count a power of two), rounded once (fp32
 * directly; bf16 through the float rounded to odd). fp16 has no lane conversion: it is not taken.
 *
 * <p>Loaded only where the module is ({@link HostAverage#lanes()}): referring to this class
 * otherwise fails. Thread-safety: stateless.
 */
final class LaneAverage {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    /** Elements a step: the float64 lanes of the widest vector. */
    static final int LANES = D.length();
    private static final VectorSpecies<Float> F = VectorSpecies.of(float.class, VectorShape.forBitSize(32 * LANES));
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, VectorShape.forBitSize(32 * LANES));
    private static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * LANES));
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private LaneAverage() {
    }

    /** Whether these lanes suit the host (a float64 vector of 4 lanes or more: the shapes below exist). */
    static boolean suits() {
        return LANES >= 4 && D.vectorBitSize() <= 512;
    }

    /**
     * Averages elements {@code [from, from + steps * LANES)} of the inputs into every input, fp32 or
     * bf16, {@code in.length >= 2}.
     */
    static void averageIntoAll(DType dtype, MemorySegment[] in, long from, long steps) {
        if (in.length == 2) {
            if (dtype == DType.FP32) {
                twoFp32(in[0], in[1], from, steps);
            } else {
                twoBf16(in[0], in[1], from, steps);
            }
            return;
        }
        int k = in.length;
        DoubleVector kv = DoubleVector.broadcast(D, k);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / k);
        boolean powerOfTwo = Integer.bitCount(k) == 1;
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            DoubleVector sum = load(dtype, in[0], i).add(load(dtype, in[1], i));
            for (int r = 2; r < k; r++) {
                sum = sum.add(load(dtype, in[r], i));
            }
            DoubleVector q = powerOfTwo ? sum.mul(rv) : byCount(sum, kv, rv);
            if (dtype == DType.FP32) {
                FloatVector f = (FloatVector) q.convertShape(VectorOperators.D2F, F, 0);
                for (MemorySegment m : in) {
                    f.intoMemorySegment(m, 4 * i, ORDER);
                }
            } else {
                ShortVector b = bf16(q);
                for (MemorySegment m : in) {
                    b.intoMemorySegment(m, 2 * i, ORDER);
                }
            }
        }
    }

    // Two replicas (the common case), written out: their sum halved is exact, and no loop over replicas.

    private static void twoFp32(MemorySegment a, MemorySegment b, long from, long steps) {
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            DoubleVector sum = load(DType.FP32, a, i).add(load(DType.FP32, b, i));
            FloatVector f = (FloatVector) sum.mul(0.5).convertShape(VectorOperators.D2F, F, 0);
            f.intoMemorySegment(a, 4 * i, ORDER);
            f.intoMemorySegment(b, 4 * i, ORDER);
        }
    }

    /**
     * Two bf16 replicas in float lanes: {@code a * 0.5f + b * 0.5f} rounds to bf16 as their float64
     * mean does (the halves are exact; see the average kernels' JVM form), then to nearest-even.
     */
    private static void twoBf16(MemorySegment a, MemorySegment b, long from, long steps) {
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            FloatVector mean = bf16Floats(a, i).mul(0.5f).add(bf16Floats(b, i).mul(0.5f));
            ShortVector m = nearestBf16(mean.reinterpretAsInts());
            m.intoMemorySegment(a, 2 * i, ORDER);
            m.intoMemorySegment(b, 2 * i, ORDER);
        }
    }

    /** bf16 elements as the floats they denote: the float's upper half (the sign extension shifts out). */
    private static FloatVector bf16Floats(MemorySegment m, long i) {
        IntVector w = (IntVector) ShortVector.fromMemorySegment(S, m, 2 * i, ORDER).convertShape(VectorOperators.S2I, I, 0);
        return w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    private static DoubleVector load(DType dtype, MemorySegment m, long i) {
        FloatVector f = dtype == DType.FP32 ? FloatVector.fromMemorySegment(F, m, 4 * i, ORDER) : bf16Floats(m, i);
        return (DoubleVector) f.convertShape(VectorOperators.F2D, D, 0);
    }

    /** {@link Quotients#byCount}, lane by lane; the product where the remainder is NaN (an infinite or NaN sum). */
    private static DoubleVector byCount(DoubleVector sum, DoubleVector k, DoubleVector r) {
        DoubleVector q = sum.mul(r);
        DoubleVector remainder = q.neg().fma(k, sum);
        DoubleVector corrected = remainder.neg().fma(r, q.neg()).neg();
        return corrected.blend(q, remainder.compare(VectorOperators.NE, remainder));
    }

    /** {@code q} rounded once to bf16: to a float by round-to-odd, then to nearest-even (a NaN made quiet). */
    private static ShortVector bf16(DoubleVector q) {
        FloatVector f = (FloatVector) q.convertShape(VectorOperators.D2F, F, 0);
        DoubleVector back = (DoubleVector) f.convertShape(VectorOperators.F2D, D, 0);
        IntVector bits = f.reinterpretAsInts();
        // an inexact float with an even last bit steps to its odd neighbour on q's side of it
        VectorMask<Integer> inexact = back.compare(VectorOperators.NE, q).and(q.compare(VectorOperators.EQ, q)).cast(I);
        VectorMask<Integer> up = back.abs().compare(VectorOperators.LT, q.abs()).cast(I);
        VectorMask<Integer> even = bits.and(1).compare(VectorOperators.EQ, 0);
        bits = bits.add(IntVector.broadcast(I, -1).blend(1, up), inexact.and(even));
        return nearestBf16(bits);
    }

    /** Float bits rounded to the nearest bf16 (ties to even; a NaN made quiet), as {@code HalfFloats.floatToBf16}. */
    private static ShortVector nearestBf16(IntVector bits) {
        VectorMask<Integer> nan = bits.and(0x7FFF_FFFF).compare(VectorOperators.GT, 0x7F80_0000);
        IntVector bias = bits.lanewise(VectorOperators.LSHR, 16).and(1).add(0x7FFF);
        IntVector rounded = bits.add(bias.blend(0, nan)).or(IntVector.zero(I).blend(0x0040_0000, nan));
        return (ShortVector) rounded.lanewise(VectorOperators.LSHR, 16).convertShape(VectorOperators.I2S, S, 0);
    }
}
