/* placeholder */
int tk_plugin_run(int n);
int tk_plugin_run(int n) { return n; }
