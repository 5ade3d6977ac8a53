package io.gradsync.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code gradsync} command line. */
@Command(name = "gradsync", mixinStandardHelpOptions = true, versionProvider = Gradsync.Version.class,
        description = "Averages gradients across devices for data-parallel training; lists devices and measures sync throughput.",
        subcommands = {DevicesCommand.class, BenchCommand.class, LinksCommand.class, TrainCommand.class, CommandLine.HelpCommand.class},
        footer = {"", "Examples:", "  gradsync devices", "  gradsync bench --backend cpu --devices 4 --sizes 1M,16M,256M"})
public final class Gradsync {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code: 0 ok, 2 bad usage, 1 failure. */
    public static int run(String... args) {
        CommandLine cli = new CommandLine(new Gradsync());
        cli.setParameterExceptionHandler((e, a) -> {
            e.getCommandLine().getErr().println("gradsync: " + e.getMessage());
            e.getCommandLine().getErr().println("Try '" + e.getCommandLine().getCommandSpec().qualifiedName()
                    + " --help' for more information.");
            return 2;
        });
        cli.setExecutionExceptionHandler((e, c, p) -> {
            c.getErr().println("gradsync: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            return e instanceof IllegalArgumentException ? 2 : 1;
        });
        return cli.execute(args);
    }

    /** Version from the jar manifest when packaged. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Gradsync.class.getPackage().getImplementationVersion();
            return new String[] {"gradsync " + (v == null ? "dev" : v) + " on Java " + Runtime.version()};
        }
    }
}
