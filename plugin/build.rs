//! Version and release date for the plugin's description (`gst-inspect-1.0`).

fn main() {
    gst_plugin_version_helper::info();
}
