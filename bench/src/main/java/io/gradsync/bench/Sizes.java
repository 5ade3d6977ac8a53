package io.gradsync.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Byte sizes as users write them: {@code 1024}, {@code 64K}, {@code 16M}, {@code 1G}, {@code 1T} (binary units). */
public final class Sizes {
    private Sizes() {
    }

    public static long parse(String text) {
        String t = text.trim().toUpperCase(Locale.ROOT);
        if (t.endsWith("IB")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("B") && t.length() > 1 && !Character.isDigit(t.charAt(t.length() - 2))) {
            t = t.substring(0, t.length() - 1);
        }
        long unit = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'K' -> unit = 1L << 10;
                case 'M' -> unit = 1L << 20;
                case 'G' -> unit = 1L << 30;
                case 'T' -> unit = 1L << 40; // format writes T, so parse reads it back
                default -> unit = 1;
            }
        }
        String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
        try {
            long value = Math.multiplyExact(Long.parseLong(digits), unit);
            if (value <= 0) {
                throw new IllegalArgumentException("size must be positive: '" + text + "'");
            }
            return value;
        } catch (NumberFormatException | ArithmeticException e) {
            // digits that overflow a long are a size too large, not a typo
            throw new IllegalArgumentException(digits.matches("\\d+") ? "size '" + text + "' is 8 EiB or more, beyond a 64-bit byte count"
                    : "not a size: '" + text + "' (use e.g. 4096, 64K, 16M, 1G)");
        }
    }

    /**
     * A comma list of sizes, in the order given; {@code FROM..TO} stands for FROM and its doublings
     * up to TO (nccl-tests' {@code -b FROM -e TO -f 2}): {@code 1M..1G} is 1M, 2M, 4M, ... 1G.
     * An empty item ({@code 1M,,16M}) is refused, not skipped.
     */
    public static List<Long> parseList(String text) {
        List<Long> sizes = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            if (part.isBlank()) {
                throw new IllegalArgumentException(text.isBlank() ? "no sizes given in '" + text + "'"
                        : "empty item in '" + text + "'");
            }
            int range = part.indexOf("..");
            if (range < 0) {
                sizes.add(parse(part));
                continue;
            }
            long from = parse(part.substring(0, range));
            long to = parse(part.substring(range + 2));
            if (to < from) {
                throw new IllegalArgumentException("size range '" + part.trim() + "' runs backwards");
            }
            for (long v = from; v <= to; v *= 2) {
                sizes.add(v);
                if (v > Long.MAX_VALUE / 2) {
                    break;
                }
            }
        }
        if (sizes.isEmpty()) {
            throw new IllegalArgumentException("no sizes given in '" + text + "'");
        }
        return sizes;
    }

    /**
     * {@code 1M}, {@code 256K}, {@code 1536M}: the short form used in tables and file names, exact
     * (the largest unit that divides the size; {@link #parse} reads it back).
     */
    public static String format(long bytes) {
        String[] units = {"", "K", "M", "G", "T"};
        long v = bytes;
        int u = 0;
        // in longs: a double rounds sizes near 2^63 to a power of two and names a size nobody asked for
        while (v != 0 && v % 1024 == 0 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return v + units[u];
    }
}
