package io.gradsync.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * Bad option values as picocli usage errors: the launcher prints them as one line and exits 2,
 * before anything is measured.
 */
final class Usage {
    private Usage() {
    }

    static ParameterException error(CommandSpec spec, String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** Runs a parser; its IllegalArgumentException becomes a usage error. */
    static <T> T parse(CommandSpec spec, Supplier<T> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            throw error(spec, e.getMessage());
        }
    }

    /** As {@link #parse(CommandSpec, Supplier)}, the message prefixed with the option it is about. */
    static <T> T parse(CommandSpec spec, String option, Supplier<T> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            throw error(spec, option + ": " + e.getMessage());
        }
    }

    /**
     * The trimmed items of a comma list. An empty item is refused rather than skipped: a stray
     * comma more often hides a lost value than it means nothing.
     *
     * @throws IllegalArgumentException naming {@code option}
     */
    static List<String> items(String option, String text) {
        if (text.isBlank()) {
            throw new IllegalArgumentException(option + " needs a value, got '" + text + "'");
        }
        List<String> items = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            if (part.isBlank()) {
                throw new IllegalArgumentException(option + ": empty item in '" + text + "'");
            }
            items.add(part.trim());
        }
        return items;
    }
}
