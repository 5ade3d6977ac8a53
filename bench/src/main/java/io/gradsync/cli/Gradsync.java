package io.gradsync.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code gradsync} command line. */
@Command(name = "gradsync", mixinStandardHelpOptions = true, versionProvider = Gradsync.Version.class,
        description = "Averages gradients across devices for data-parallel training; lists devices, measures sync "
                + "throughput, compares the generated kernels and trains a data-parallel demo model.",
        subcommands = {DevicesCommand.class, BenchCommand.class, CompareCommand.class, KernelsCommand.class,
            TrainCommand.class, LinksCommand.class, CommandLine.HelpCommand.class},
        footer = {"", "Examples:", "  gradsync devices",
            "  gradsync bench --backend all --devices 4 --json bench.json --plot bench.png",
            "  gradsync compare --size 64M",
            "  gradsync kernels --emit ptx --out build/ptx",
            "  gradsync train --backend all --devices 4",
            "  gradsync bench --help",
            "", "scripts/gradsync --print-flags shows the Java, JVM flags and environment the launcher uses.",
            "scripts/gradsync run [--nproc N] -cp CLASSPATH MAINCLASS [ARGS...] runs your own program with them."})
public final class Gradsync {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code: 0 ok, 2 bad usage, 1 failure. */
    public static int run(String... args) {
        CommandLine cli = new CommandLine(new Gradsync());
        // Errors are one line (scripts grep them) with the way to the help on it.
        cli.setParameterExceptionHandler((e, a) -> {
            String command = e.getCommandLine().getCommandSpec().qualifiedName();
            e.getCommandLine().getErr().println(command + ": " + oneLine(e.getMessage()) + " (see " + command + " --help)");
            return 2;
        });
        cli.setExecutionExceptionHandler((e, c, p) -> {
            c.getErr().println(c.getCommandSpec().qualifiedName() + ": " + oneLine(e.getMessage() == null ? e.toString() : e.getMessage()));
            return e instanceof IllegalArgumentException ? 2 : 1;
        });
        return cli.execute(args);
    }

    private static String oneLine(String message) {
        return message.strip().replaceAll("\\s*\\R\\s*", "; ");
    }

    /** Version from the jar manifest when packaged, else from the build's version.properties. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Gradsync.class.getPackage().getImplementationVersion();
            return new String[] {"gradsync " + (v != null ? v : built()) + " on Java " + Runtime.version()};
        }

        /** target/classes has no manifest: the version Maven wrote into the resource, or "dev" where unfiltered. */
        static String built() {
            try (java.io.InputStream in = Gradsync.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    java.util.Properties p = new java.util.Properties();
                    p.load(in);
                    String v = p.getProperty("version", "");
                    if (!v.isBlank() && !v.startsWith("${")) {
                        return v;
                    }
                }
            } catch (java.io.IOException e) {
                // unreadable: fall through to "dev"
            }
            return "dev";
        }
    }
}
