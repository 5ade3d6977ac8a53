package io.gradsync.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * An all-reduce measured by another program, read from its log: the first nccl-tests style table
 * (size, count, type, redop, then time and busbw), as bench/scripts/torch_allreduce.py prints it
 * (its per-call columns come first), as nccl-tests prints it (2.11 and later with a root column,
 * earlier without), or as {@code gradsync bench} itself does. {@code gradsync bench --reference}
 * sets our rows beside it.
 *
 * @param label names the reference in tables, JSON and the plot
 * @param file  the log as given on the command line
 * @param type  the element type as the table names it (float, bfloat16, ...)
 * @param rows  one per size, in the order of the table
 */
public record AllReduceReference(String label, String file, String type, List<Row> rows) {

    /** One size of the reference: time per call in microseconds, busbw as nccl-tests defines it. */
    public record Row(long bytes, double timeUs, double busbwGBs) {
    }

    /** What torch_allreduce.py's label is unless the command line gives one. */
    public static final String TORCH_LABEL = "PyTorch NCCL";

    private static final Set<String> REDUCE_OPS = Set.of("sum", "prod", "min", "max", "avg", "premulsum");

    public AllReduceReference {
        rows = List.copyOf(rows);
    }

    /** The row for {@code bytes}, or null where the reference did not measure that size. */
    public Row at(long bytes) {
        for (Row r : rows) {
            if (r.bytes() == bytes) {
                return r;
            }
        }
        return null;
    }

    /**
     * {@code FILE[=LABEL]}, read now. A whole argument that names an existing file is a file, so a
     * path with '=' in it still works; otherwise the text after the last '=' is the label.
     *
     * @throws IllegalArgumentException naming the file, when it cannot be read or holds no table
     */
    public static AllReduceReference parse(String spec) {
        String file = spec;
        String label = null;
        int eq = spec.lastIndexOf('=');
        if (eq >= 0 && !Files.isRegularFile(Path.of(spec))) {
            file = spec.substring(0, eq);
            label = spec.substring(eq + 1).strip();
        }
        if (file.isBlank()) {
            throw new IllegalArgumentException("no file in '" + spec + "' (use FILE or FILE=LABEL)");
        }
        List<String> lines;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(Files.newInputStream(Path.of(file)),
                StandardCharsets.UTF_8))) { // InputStreamReader replaces bytes that are not UTF-8: logs may hold any
            lines = in.lines().toList();
        } catch (IOException | java.io.UncheckedIOException | java.nio.file.InvalidPathException e) {
            throw new IllegalArgumentException("cannot read '" + file + "': " + reason(e), e);
        }
        return of(file, label == null || label.isEmpty() ? null : label, lines);
    }

    /** The first table in {@code lines}; {@code label} null: PyTorch's name for a torch_allreduce.py log, else the file name. */
    public static AllReduceReference of(String file, String label, List<String> lines) {
        Map<Long, Row> rows = new LinkedHashMap<>();
        String type = null;
        boolean torch = false;
        for (String line : lines) {
            if (line.startsWith("[rank")) {
                continue; // the other ranks' warnings, interleaved with rank 0's table
            }
            String[] f = line.strip().split("\\s+");
            if (f[0].startsWith("#")) {
                boolean header = f[0].equals("#size") || (f[0].equals("#") && f.length > 1 && f[1].equals("size"));
                if (header && !rows.isEmpty()) {
                    break; // the next table's column header: only the first table counts
                }
                torch |= line.startsWith("# torch"); // torch_allreduce.py's first lines
                continue;
            }
            Row r = row(f);
            if (r != null) {
                rows.putIfAbsent(r.bytes(), r);
                type = type == null ? f[2] : type;
            }
        }
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no nccl-tests style table in '" + file
                    + "' (rows of size, count, type, redop, time, ..., busbw)");
        }
        String name = label != null ? label : torch ? TORCH_LABEL : String.valueOf(Path.of(file).getFileName());
        return new AllReduceReference(name, file, type, new ArrayList<>(rows.values()));
    }

    /** A table row, or null: size and count whole numbers, a reduction op 4th, time and busbw numbers. */
    private static Row row(String[] f) {
        // after redop: nccl-tests 2.11 and later root (-1), time, algbw, busbw; nccl-tests 2.10 and
        // earlier time, algbw, busbw, error; torch_allreduce.py and gradsync time, spread (a range,
        // "12-34"), algbw, busbw. The column after the time tells the last two apart.
        if (f.length < 8 || !f[0].matches("[0-9]+") || !f[1].matches("[0-9]+")
                || !REDUCE_OPS.contains(f[3].toLowerCase(Locale.ROOT))) {
            return null;
        }
        boolean root = f[4].equals("-1");
        boolean noRootNoSpread = !root && f[5].matches("[0-9]+(\\.[0-9]*)?");
        int time = root ? 5 : 4;
        int busbwAt = noRootNoSpread ? 6 : 7;
        try {
            long bytes = Long.parseLong(f[0]);
            double us = Double.parseDouble(f[time]);
            double busbw = Double.parseDouble(f[busbwAt]);
            if (bytes <= 0 || !(us > 0) || !(busbw >= 0) || Double.isInfinite(us) || Double.isInfinite(busbw)) {
                return null;
            }
            return new Row(bytes, us, busbw);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String reason(Exception e) {
        Throwable c = e instanceof java.io.UncheckedIOException u ? u.getCause() : e;
        String kind = c.getClass().getSimpleName();
        return switch (kind) {
            case "NoSuchFileException" -> "no such file";
            case "AccessDeniedException" -> "permission denied";
            default -> c.getMessage() == null ? kind : c.getMessage();
        };
    }
}
