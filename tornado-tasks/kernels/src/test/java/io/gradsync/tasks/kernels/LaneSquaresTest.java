package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.HalfFloats;
import io.gradsync.tasks.kernels.internal.Lanes;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The sums of squares in lanes over every range of up to 300 elements around their passes, single
 * vectors and single elements, from several starts: small integers, whose squares' sums are exact
 * in any order, so that an element missed, added twice or read from outside the range shows as a
 * different sum. Elements outside the range hold other integers.
 */
class LaneSquaresTest {
    @ParameterizedTest
    @ValueSource(strings = {"f32", "bf16", "f16"})
    void everyElementOfTheRangeOnceAndNoOther(String type) {
        Assumptions.assumeTrue(Lanes.available(), "no vector module: the plain loops are JvmReductionsTest's");
        SplittableRandom random = new SplittableRandom(28);
        int bytes = type.equals("f32") ? 4 : 2;
        for (int from : new int[] {0, 1, 8, 13}) {
            for (int n = 0; n <= 300; n++) {
                try (Arena arena = Arena.ofConfined()) {
                    int size = from + n + 40;
                    MemorySegment x = arena.allocate((long) bytes * size);
                    double exact = 0;
                    for (int i = 0; i < size; i++) {
                        int v = random.nextInt(-15, 16);
                        if (i >= from && i < from + n) {
                            exact += (double) v * v;
                        } else {
                            v = 100 + random.nextInt(50); // never counted
                        }
                        switch (type) {
                            case "f32" -> x.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
                            case "bf16" -> x.setAtIndex(ValueLayout.JAVA_SHORT, i, HalfFloats.floatToBf16(v));
                            default -> x.setAtIndex(ValueLayout.JAVA_SHORT, i, Float.floatToFloat16(v));
                        }
                    }
                    double got = switch (type) {
                        case "f32" -> Lanes.sumOfSquaresF32(x, from, from + n);
                        case "bf16" -> Lanes.sumOfSquaresBf16(x, from, from + n);
                        default -> Lanes.sumOfSquaresF16(x, from, from + n);
                    };
                    assertEquals(exact, got, type + ": elements [" + from + ", " + (from + n) + ")");
                }
            }
        }
    }
}
