/**
 * The {@code gradsync} command line and the JMH benchmarks. Uses the exported API, and the
 * internals that gradsync's modules export to it by name (the compiler's IR for the kernels'
 * arguments, the launcher for timing each form, the CUDA driver package for the nvcc reference).
 */
@SuppressWarnings("requires-automatic") // XChart and JMH publish no module descriptor of their own
module io.gradsync.bench {
    requires io.gradsync.train;
    requires io.gradsync.sync;
    requires io.gradsync.nccl;
    requires info.picocli;
    requires me.tongfei.progressbar;
    requires org.knowm.xchart;
    requires com.fasterxml.jackson.databind;
    requires jmh.core;
    requires java.desktop;
    requires jdk.management;

    // an application: it exports nothing (its JMH benchmarks run from the shaded jar, on the class path)
    opens io.gradsync.cli to info.picocli; // its commands' options are fields picocli fills
}
