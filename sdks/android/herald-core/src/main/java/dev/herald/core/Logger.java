package dev.herald.core;

/** Where the library logs (android.util.Log in the glue). Never throws. */
public interface Logger {
    void debug(String message);

    void warn(String message, Throwable error);

    Logger NONE = new Logger() {
        @Override
        public void debug(String message) {}

        @Override
        public void warn(String message, Throwable error) {}
    };

    Logger STDERR = new Logger() {
        @Override
        public void debug(String message) {
            System.err.println("Herald: " + message);
        }

        @Override
        public void warn(String message, Throwable error) {
            System.err.println("Herald: " + message + (error == null ? "" : " (" + error + ")"));
        }
    };
}
