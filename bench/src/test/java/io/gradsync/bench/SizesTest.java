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

    @Test
    void plotLabelsNameEveryPowerOfTwoAndNothingBetween() {
        assertEquals("1M", BenchPlot.sizeLabel(BenchPlot.log2(1L << 20)));
        assertEquals("1G", BenchPlot.sizeLabel(30));
        assertEquals("64K", BenchPlot.sizeLabel(16));
        assertEquals("", BenchPlot.sizeLabel(20.5));
    }
}
