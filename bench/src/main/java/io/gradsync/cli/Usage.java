package io.gradsync.cli;

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
}
