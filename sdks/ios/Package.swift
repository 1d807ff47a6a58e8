// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "Herald",
    platforms: [.iOS(.v13), .macOS(.v10_15)],
    products: [
        .library(name: "Herald", targets: ["Herald"]),
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
    ],
    targets: [
        // Everything with logic: Foundation (and FoundationNetworking on Linux) only.
        .target(name: "HeraldCore", path: "Sources/HeraldCore"),
        // The platform glue (Keychain, UIKit, UserNotifications) over the core.
        .target(name: "Herald", dependencies: ["HeraldCore"], path: "Sources/Herald"),
        .testTarget(name: "HeraldCoreTests", dependencies: ["HeraldCore"], path: "Tests/HeraldCoreTests"),
        .testTarget(name: "HeraldLiveTests", dependencies: ["HeraldCore"], path: "Tests/HeraldLiveTests"),
    ],
    swiftLanguageVersions: [.v5]
)
