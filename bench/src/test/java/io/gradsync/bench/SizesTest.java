package io.gradsync.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class SizesTest {

    @Test
    void listsAndDoublingRanges() {
        assertEquals(List.of(1024L, 64L << 10, 16L << 20, 1L << 30), Sizes.parseList("1024, 64K,16MiB,1G"));
        List<Long> sweep = Sizes.parseList("1M..1G");
        assertEquals(11, sweep.size());
        assertEquals(1L << 20, sweep.getFirst());
        assertEquals(1L << 30, sweep.getLast());
        assertEquals(List.of(3L << 20, 6L << 20, 8L << 20), Sizes.parseList("3M..7M,8M"));
    }

    @Test
    void badSizesNameTheValue() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parseList("1M,12X")).getMessage().contains("'12X'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parseList("1G..1M")).getMessage().contains("backwards"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parseList(" , "));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("-4K"));
    }

    /** Exact, in longs: 2^63 - 1 was printed as 8388608T (a double rounds it up to 2^63). */
    @Test
    void formatIsExactAndParsesBack() {
        assertEquals("9223372036854775807", Sizes.format(Long.MAX_VALUE));
        assertEquals("1536M", Sizes.format(1536L << 20));
        assertEquals("4194304T", Sizes.format(1L << 62));
        assertEquals("1025K", Sizes.format(1025L << 10));
        for (long v : new long[] {1, 1023, 1L << 20, 1536L << 20, Long.MAX_VALUE, 1L << 62, (1L << 62) + 1024}) {
            assertEquals(v, Sizes.parse(Sizes.format(v)), Sizes.format(v));
        }
    }

    @Test
    void emptyItemsAndOverflowAreRefusedAsSuch() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parseList("1M,,2M")).getMessage().contains("empty item in '1M,,2M'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parseList("1M,")).getMessage().contains("empty item"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parse("8388608T")).getMessage().contains("8 EiB or more"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Sizes.parse("99999999999999999999")).getMessage().contains("8 EiB or more"));
    }

    @Test
    void plotLabelsNameEveryPowerOfTwoAndNothingBetween() {
        assertEquals("1M", BenchPlot.sizeLabel(BenchPlot.log2(1L << 20)));
        assertEquals("1G", BenchPlot.sizeLabel(30));
        assertEquals("64K", BenchPlot.sizeLabel(16));
        assertEquals("", BenchPlot.sizeLabel(20.5));
    }
}
