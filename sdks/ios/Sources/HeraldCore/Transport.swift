import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

public struct HTTPRequest {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct HTTPResponse {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: Data
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.body = body
        var lower: [String: String] = [:]
        for (k, v) in headers { lower[k.lowercased()] = v }
        self.headers = lower
    }
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Sends one HTTP request. Completion is called exactly once, on any thread: a response
/// (any status) or an error (no answer: DNS, connect, reset, timeout).
public protocol HTTPTransport {
    func perform(_ request: HTTPRequest, completion: @escaping (Result<HTTPResponse, Error>) -> Void)
}

/// The default transport: URLSession with 10 s without progress (connect) and 40 s for a
/// whole exchange (docs/sdk-protocol.md §5: 10 s to connect, 30 s for the answer).
/// The core treats answers above 1 MB as unreadable (a device is a few hundred bytes).
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    public init(connectTimeout: TimeInterval = 10, answerTimeout: TimeInterval = 30) {
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = connectTimeout
        config.timeoutIntervalForResource = connectTimeout + answerTimeout
        config.httpCookieAcceptPolicy = .never
        config.httpShouldSetCookies = false
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: config)
    }

    public func perform(_ request: HTTPRequest, completion: @escaping (Result<HTTPResponse, Error>) -> Void) {
        var req = URLRequest(url: request.url)
        req.httpMethod = request.method
        req.httpBody = request.body
        for (k, v) in request.headers { req.setValue(v, forHTTPHeaderField: k) }
        let task = session.dataTask(with: req) { data, response, error in
            if let http = response as? HTTPURLResponse, error == nil {
                var headers: [String: String] = [:]
                for (k, v) in http.allHeaderFields {
                    if let k = k as? String { headers[k] = "\(v)" }
                }
                completion(.success(HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data())))
            } else {
                completion(.failure(error ?? URLError(.badServerResponse)))
            }
        }
        task.resume()
    }
}
