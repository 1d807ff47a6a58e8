import Foundation

/// The device's language and time zone as Herald stores them (docs/sdk-protocol.md §4):
/// an ISO 639-1 code from a BCP 47 tag or an Apple locale identifier ("pt-BR", "en_US" → "pt",
/// "en"), and an IANA zone name. Anything else is nil: leave the field out, since the API
/// refuses the whole registration for a bad value.
public enum HeraldLocale {
    public static func language(of tag: String?) -> String? {
        guard let tag = tag else { return nil }
        let primary = tag.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init) ?? ""
        guard primary.count == 2, primary.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) }) else {
            return nil
        }
        return primary.lowercased()
    }

    /// The zone when it is an IANA name ("Europe/Berlin", "UTC", "Etc/GMT+5"), not an offset ("GMT+05:30").
    public static func timezone(of zone: String?) -> String? {
        guard let zone = zone, !zone.isEmpty, zone.count <= 64 else { return nil }
        let parts = zone.split(separator: "/", omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty,
              first.unicodeScalars.allSatisfy({ isLetter($0) || $0 == "_" }) else { return nil }
        for part in parts.dropFirst() {
            guard !part.isEmpty, part.unicodeScalars.allSatisfy({ isLetter($0) || ("0"..."9").contains($0) || "_+-".unicodeScalars.contains($0) }) else {
                return nil
            }
        }
        return zone
    }

    private static func isLetter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) }

    /// The language the platform prefers: the first preferred language, else the current locale's.
    public static func currentLanguageTag() -> String? {
        Locale.preferredLanguages.first ?? Locale.current.identifier
    }

    public static func currentTimezone() -> String? { timezone(of: TimeZone.current.identifier) }
}

/// The APNs device token as Herald registers it: lowercase hex of the bytes.
public func heraldHexToken(_ token: Data) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(token.count * 2)
    for byte in token {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}
