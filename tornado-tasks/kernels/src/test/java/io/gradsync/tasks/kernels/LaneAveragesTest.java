package io.gradsync.tasks.kernels;

import io.gradsync.tasks.kernels.internal.Lanes;
import io.gradsync.tasks.kernels.internal.Quotients;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The fp32 averages in lanes ({@link Lanes#averageF32}) for 2 to 10 inputs, divisors equal to the
 * count and not, every step count from 0 to 9 from two starts, into a separate output, into the
 * first input, and into every input: each element of the steps the kernels' bits (the float64 sum in
 * order, divided as {@link Quotients#divide} does, rounded once), and nothing before or after the
 * steps written (the segments end where the steps do: a step may read or write no further).
 * Native segments, and heap ones among them (which the lanes take one element at a time).
 */
class LaneAveragesTest {
    private static final int POISON = 0x7FC0_0DEF;

    @Test
    void everyStepAsTheKernelsAndNothingElse() {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the plain loops are the forms' tests'");
        SplittableRandom random = new SplittableRandom(28);
        int width = Lanes.width();
        for (int inputs = 2; inputs <= 10; inputs++) {
            for (float k : new float[] {inputs, 2.5f}) {
                for (int from : new int[] {0, 3}) {
                    for (int steps = 0; steps <= 9; steps++) {
                        for (String outputs : new String[] {"separate", "first", "all"}) {
                            for (boolean heap : new boolean[] {false, true}) {
                                check(random, inputs, k, from, steps, width, outputs, heap);
                            }
                        }
                    }
                }
            }
        }
    }

    private static void check(SplittableRandom random, int inputs, float k, int from, int steps, int width, String outputs, boolean heap) {
        long end = from + (long) steps * width;
        String what = inputs + " inputs, k " + k + ", from " + from + ", " + steps + " steps, output " + outputs + (heap ? ", some on the heap" : "");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] in = new MemorySegment[inputs];
            float[][] was = new float[inputs][(int) end];
            for (int r = 0; r < inputs; r++) {
                in[r] = heap && r % 2 == 1 ? MemorySegment.ofArray(new float[(int) end]) : arena.allocate(4 * end);
                for (int i = 0; i < end; i++) {
                    float v = i < from ? Float.intBitsToFloat(POISON) : (float) (random.nextGaussian() * Math.scalb(1.0, random.nextInt(-20, 20)));
                    was[r][i] = v;
                    in[r].setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
                }
            }
            MemorySegment[] out = switch (outputs) {
                case "separate" -> new MemorySegment[] {heap ? MemorySegment.ofArray(new float[(int) end]) : arena.allocate(4 * end)};
                case "first" -> new MemorySegment[] {in[0]};
                default -> in;
            };
            if (outputs.equals("separate")) {
                out[0].fill((byte) 0x5A);
            }
            Lanes.averageF32(in, out, from, steps, k);
            for (int i = 0; i < end; i++) {
                double sum = was[0][i];
                for (int r = 1; r < inputs; r++) {
                    sum += was[r][i];
                }
                for (MemorySegment m : out) {
                    int got = m.getAtIndex(ValueLayout.JAVA_INT, i);
                    int expected = i < from ? (outputs.equals("separate") ? 0x5A5A_5A5A : POISON)
                            : Float.floatToRawIntBits((float) Quotients.divide(sum, k, 1.0 / k));
                    assertEquals(expected, got, what + ", element " + i);
                }
            }
            for (int r = 0; r < inputs; r++) {
                if (outputs.equals("separate") || (outputs.equals("first") && r > 0)) {
                    for (int i = 0; i < end; i++) {
                        assertEquals(Float.floatToRawIntBits(was[r][i]), in[r].getAtIndex(ValueLayout.JAVA_INT, i), what + ": input " + r + " written");
                    }
                }
            }
        }
    }
}
