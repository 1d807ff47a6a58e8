package dev.herald.core;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Answers requests from a queue (or a handler) and records them. */
final class FakeTransport implements HttpTransport {
    final List<Request> requests = new ArrayList<>();
    private final Deque<Object> answers = new ArrayDeque<>();
    Function<Request, Response> fallback;

    static Response answer(int status, String body, String... headers) {
        Map<String, String> h = new LinkedHashMap<>();
        for (int i = 0; i + 1 < headers.length; i += 2) h.put(headers[i], headers[i + 1]);
        return new Response(status, h, body);
    }

    FakeTransport then(int status, String body, String... headers) {
        answers.add(answer(status, body, headers));
        return this;
    }

    FakeTransport thenNetworkError() {
        answers.add(new IOException("connection reset"));
        return this;
    }

    int pending() {
        return answers.size();
    }

    Request last() {
        return requests.get(requests.size() - 1);
    }

    List<String> lines() {
        List<String> out = new ArrayList<>();
        for (Request r : requests) out.add(r.method + " " + r.url.replaceFirst("^https?://[^/]+", ""));
        return Collections.unmodifiableList(out);
    }

    @Override
    public Response execute(Request request) throws IOException {
        requests.add(request);
        Object next = answers.poll();
        if (next == null) {
            if (fallback != null) return fallback.apply(request);
            throw new IOException("no answer queued for " + request.method + " " + request.url);
        }
        if (next instanceof IOException) throw (IOException) next;
        return (Response) next;
    }
}
