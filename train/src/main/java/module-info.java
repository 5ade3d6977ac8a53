/** The data-parallel MLP demo: forward, backward and optimizer as Java kernels in task graphs. */
module io.gradsync.train {
    requires transitive io.gradsync.sync;

    exports io.gradsync.train;
    opens io.gradsync.train to io.gradsync.tasks.api; // its kernels are read and resolved reflectively
}
