package dev.herald.core;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * HttpURLConnection with the timeouts of docs/sdk-protocol.md §5 (10 s to connect, 30 s for
 * the answer). Bodies beyond {@link #MAX_BODY_BYTES} are not read into memory: the answer
 * then has a null body, which the core treats as malformed.
 */
public final class UrlConnectionTransport implements HttpTransport {
    /** Herald's answers are small (20 in-app messages, 100 channels); 1 MiB is plenty. */
    public static final int MAX_BODY_BYTES = 1 << 20;

    private final int connectTimeoutMs;
    private final int readTimeoutMs;

    public UrlConnectionTransport() {
        this(10_000, 30_000);
    }

    public UrlConnectionTransport(int connectTimeoutMs, int readTimeoutMs) {
        this.connectTimeoutMs = connectTimeoutMs;
        this.readTimeoutMs = readTimeoutMs;
    }

    @Override
    public Response execute(Request request) throws IOException {
        HttpURLConnection conn = (HttpURLConnection) new URL(request.url).openConnection();
        try {
            conn.setConnectTimeout(connectTimeoutMs);
            conn.setReadTimeout(readTimeoutMs);
            conn.setUseCaches(false);
            conn.setInstanceFollowRedirects(false);
            conn.setRequestMethod(request.method);
            for (Map.Entry<String, String> h : request.headers.entrySet()) {
                conn.setRequestProperty(h.getKey(), h.getValue());
            }
            if (request.body != null) {
                byte[] bytes = request.body.getBytes(StandardCharsets.UTF_8);
                conn.setDoOutput(true);
                conn.setFixedLengthStreamingMode(bytes.length);
                try (OutputStream out = conn.getOutputStream()) {
                    out.write(bytes);
                }
            }
            int status = conn.getResponseCode();
            Map<String, String> headers = new LinkedHashMap<>();
            for (Map.Entry<String, List<String>> h : conn.getHeaderFields().entrySet()) {
                if (h.getKey() != null && h.getValue() != null && !h.getValue().isEmpty()) {
                    headers.put(h.getKey(), h.getValue().get(0));
                }
            }
            InputStream in = status >= 400 ? conn.getErrorStream() : conn.getInputStream();
            String body = in == null ? "" : readLimited(in);
            return new Response(status, headers, body);
        } finally {
            conn.disconnect();
        }
    }

    private static String readLimited(InputStream in) throws IOException {
        try (InputStream stream = in) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int n;
            while ((n = stream.read(buf)) != -1) {
                if (out.size() + n > MAX_BODY_BYTES) return null;
                out.write(buf, 0, n);
            }
            return new String(out.toByteArray(), StandardCharsets.UTF_8);
        }
    }
}
