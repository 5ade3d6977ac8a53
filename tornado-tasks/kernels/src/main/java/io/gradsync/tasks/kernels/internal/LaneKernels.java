package io.gradsync.tasks.kernels.internal;

import io.gradsync.tasks.api.HalfFloats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
 * The averages in SIMD lanes of the incubating {@code jdk.incubator.vector}: {@link Lanes}' work,
 * in a class of its own because loading it needs the module. The bits of the average kernels: the
 * float64 sum in replica order, divided as {@link Quotients#divide} does, rounded once (fp32
 * directly; bf16 through the float rounded to odd). A loop reads straight from the segments, which
 * a plain loop over several segments does not do in vectors (C2 cannot rule out that they overlap).
 *
 * <p>Thread-safety: stateless.
 */
final class LaneKernels {
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;
    /** Elements a step: the float64 lanes of the widest vector. */
    static final int LANES = D.length();
    private static final VectorSpecies<Float> F = VectorSpecies.of(float.class, VectorShape.forBitSize(32 * LANES));
    private static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, VectorShape.forBitSize(32 * LANES));
    private static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(16 * LANES));
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    private LaneKernels() {
    }

    /** Whether these lanes suit the host: a float64 vector of 4 to 8 lanes, so that the narrower shapes below exist. */
    static boolean suits() {
        return LANES >= 4 && D.vectorBitSize() <= 512;
    }

    /** See {@link Lanes#average}. A dispatch small enough for C2 to inline: the loops are methods of their own. */
    static void average(boolean bf16, MemorySegment[] in, MemorySegment[] out, long from, long steps, float k) {
        if (in.length == 2 && k == 2 && out.length <= 2) {
            MemorySegment second = out.length == 2 ? out[1] : null;
            if (bf16) {
                twoBf16(in[0], in[1], out[0], second, from, steps);
            } else {
                twoFp32(in[0], in[1], out[0], second, from, steps);
            }
        } else if (!bf16 && out.length == 1 && in.length <= 8) {
            upToEightFp32(in, out[0], from, steps, k);
        } else {
            anyCount(bf16, in, out, from, steps, k);
        }
    }

    /**
     * The float64 sum of the squares of elements {@code [from, to)}, fp32 or bf16, in no fixed
     * order (two running sums of lanes; bf16 two elements to a word): {@code sumOfSquares}.
     */
    static double sumOfSquares(boolean bf16, MemorySegment x, long from, long to) {
        DoubleVector a0 = DoubleVector.zero(D);
        DoubleVector a1 = DoubleVector.zero(D);
        int step = 2 * LANES;
        long end = to - (to - from) % step;
        for (long i = from; i < end; i += step) {
            DoubleVector v0;
            DoubleVector v1;
            if (bf16) {
                IntVector w = IntVector.fromMemorySegment(I, x, 2 * i, ORDER);
                v0 = (DoubleVector) w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
                v1 = (DoubleVector) w.and(0xFFFF_0000).reinterpretAsFloats().convertShape(VectorOperators.F2D, D, 0);
            } else {
                v0 = load(false, x, i);
                v1 = load(false, x, i + LANES);
            }
            a0 = v0.fma(v0, a0);
            a1 = v1.fma(v1, a1);
        }
        double sum = a0.add(a1).reduceLanes(VectorOperators.ADD);
        for (long i = end; i < to; i++) {
            double v = bf16 ? HalfFloats.bf16ToFloat(x.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i))
                    : x.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
            sum += v * v;
        }
        return sum;
    }

    /** Any inputs and outputs: a loop over each per step. */
    private static void anyCount(boolean bf16, MemorySegment[] in, MemorySegment[] out, long from, long steps, float k) {
        DoubleVector kv = DoubleVector.broadcast(D, k);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / k);
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            DoubleVector sum = load(bf16, in[0], i);
            for (int r = 1; r < in.length; r++) {
                sum = sum.add(load(bf16, in[r], i));
            }
            DoubleVector q = divide(sum, kv, rv);
            if (bf16) {
                ShortVector b = bf16(q);
                for (MemorySegment m : out) {
                    b.intoMemorySegment(m, 2 * i, ORDER);
                }
            } else {
                FloatVector f = (FloatVector) q.convertShape(VectorOperators.D2F, F, 0);
                for (MemorySegment m : out) {
                    f.intoMemorySegment(m, 4 * i, ORDER);
                }
            }
        }
    }

    // Two replicas and k = 2 (the common case), written out: the sum halved is exact. One output,
    // or two (null: none); C2 takes the test out of the loop, which a loop over outputs cost a third.

    private static void twoFp32(MemorySegment a, MemorySegment b, MemorySegment out, MemorySegment second, long from, long steps) {
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            DoubleVector sum = load(false, a, i).add(load(false, b, i));
            FloatVector f = (FloatVector) sum.mul(0.5).convertShape(VectorOperators.D2F, F, 0);
            f.intoMemorySegment(out, 4 * i, ORDER);
            if (second != null) {
                f.intoMemorySegment(second, 4 * i, ORDER);
            }
        }
    }

    /**
     * fp32, 2 to 8 inputs, one output: each input a local of its own and the sum written out, so
     * that no loop over the inputs runs per step (one ran at 3/4 of this speed).
     */
    private static void upToEightFp32(MemorySegment[] in, MemorySegment out, long from, long steps, float divisor) {
        DoubleVector kv = DoubleVector.broadcast(D, divisor);
        DoubleVector rv = DoubleVector.broadcast(D, 1.0 / divisor);
        int k = in.length;
        MemorySegment m0 = in[0], m1 = in[1], m2 = in[Math.min(2, k - 1)], m3 = in[Math.min(3, k - 1)];
        MemorySegment m4 = in[Math.min(4, k - 1)], m5 = in[Math.min(5, k - 1)], m6 = in[Math.min(6, k - 1)], m7 = in[k - 1];
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            DoubleVector sum = load(false, m0, i).add(load(false, m1, i));
            if (k > 2) {
                sum = sum.add(load(false, m2, i));
            }
            if (k > 3) {
                sum = sum.add(load(false, m3, i));
            }
            if (k > 4) {
                sum = sum.add(load(false, m4, i));
            }
            if (k > 5) {
                sum = sum.add(load(false, m5, i));
            }
            if (k > 6) {
                sum = sum.add(load(false, m6, i));
            }
            if (k > 7) {
                sum = sum.add(load(false, m7, i));
            }
            ((FloatVector) divide(sum, kv, rv).convertShape(VectorOperators.D2F, F, 0)).intoMemorySegment(out, 4 * i, ORDER);
        }
    }

    /**
     * Two bf16 replicas in float lanes: {@code a * 0.5f + b * 0.5f} rounds to bf16 as their float64
     * mean does (the halves are exact; see the average kernels' JVM form), then to nearest-even.
     */
    private static void twoBf16(MemorySegment a, MemorySegment b, MemorySegment out, MemorySegment second, long from, long steps) {
        long end = from + steps * LANES;
        for (long i = from; i < end; i += LANES) {
            FloatVector mean = bf16Floats(a, i).mul(0.5f).add(bf16Floats(b, i).mul(0.5f));
            ShortVector m = nearestBf16(mean.reinterpretAsInts());
            m.intoMemorySegment(out, 2 * i, ORDER);
            if (second != null) {
                m.intoMemorySegment(second, 2 * i, ORDER);
            }
        }
    }

    private static DoubleVector load(boolean bf16, MemorySegment m, long i) {
        FloatVector f = bf16 ? bf16Floats(m, i) : FloatVector.fromMemorySegment(F, m, 4 * i, ORDER);
        return (DoubleVector) f.convertShape(VectorOperators.F2D, D, 0);
    }

    /** bf16 elements as the floats they denote: the float's upper half (the sign extension shifts out). */
    private static FloatVector bf16Floats(MemorySegment m, long i) {
        IntVector w = (IntVector) ShortVector.fromMemorySegment(S, m, 2 * i, ORDER).convertShape(VectorOperators.S2I, I, 0);
        return w.lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
    }

    /** {@link Quotients#divide}, lane by lane: the corrected product, or the product where the remainder is zero or NaN. */
    private static DoubleVector divide(DoubleVector sum, DoubleVector k, DoubleVector r) {
        DoubleVector q = sum.mul(r);
        DoubleVector remainder = q.neg().fma(k, sum);
        DoubleVector corrected = remainder.fma(r, q);
        VectorMask<Double> product = remainder.compare(VectorOperators.EQ, 0).or(remainder.compare(VectorOperators.NE, remainder));
        return corrected.blend(q, product);
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
