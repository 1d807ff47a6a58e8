package dev.herald.core;

import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP exchange. {@link UrlConnectionTransport} is the default; apps may inject their
 * own (e.g. OkHttp). Throws IOException for network errors and timeouts.
 */
public interface HttpTransport {
    Response execute(Request request) throws IOException;

    final class Request {
        public final String method;
        public final String url;
        /** Header names as sent; values never null. */
        public final Map<String, String> headers;
        /** UTF-8 JSON text, or null for no body. */
        public final String body;

        public Request(String method, String url, Map<String, String> headers, String body) {
            this.method = method;
            this.url = url;
            this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
            this.body = body;
        }

        public String header(String name) {
            for (Map.Entry<String, String> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) return e.getValue();
            }
            return null;
        }
    }

    final class Response {
        public final int status;
        /** Lower-case header names. */
        public final Map<String, String> headers;
        /** The body text ("" when none); null when it was larger than the library reads. */
        public final String body;

        public Response(int status, Map<String, String> headers, String body) {
            this.status = status;
            Map<String, String> lower = new LinkedHashMap<>();
            if (headers != null) {
                for (Map.Entry<String, String> e : headers.entrySet()) {
                    if (e.getKey() != null) lower.put(e.getKey().toLowerCase(Locale.ROOT), e.getValue());
                }
            }
            this.headers = Collections.unmodifiableMap(lower);
            this.body = body;
        }

        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }
}
