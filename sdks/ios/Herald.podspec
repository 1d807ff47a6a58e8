Pod::Spec.new do |s|
  s.name          = 'Herald'
  s.version       = '0.1.0'
  s.summary       = 'iOS client library of Herald, the self-hosted push notification service.'
  s.description   = <<-DESC
    Registers the APNs token with a Herald gateway using a publishable client key, keeps the
    device's external id, tags, language, time zone and opt-in state in sync (desired state,
    stored in the Keychain, retried with back-off), reports notifications received and
    opened, downloads rich-push images in a Notification Service Extension, and fetches
    in-app messages. Follows docs/sdk-protocol.md of the Herald repository.
  DESC
  # Placeholders until the repository has a public home and a license file.
  s.homepage      = 'https://herald.example.com'
  s.license       = { :type => 'Proprietary', :text => 'See the Herald repository.' }
  s.author        = { 'Herald' => 'dev@herald.invalid' }
  s.source        = { :git => 'https://herald.example.com/herald.git', :tag => "ios-v#{s.version}" }
  s.ios.deployment_target = '13.0'
  s.osx.deployment_target = '10.15'
  s.swift_versions = ['5.9']
  # One module: the glue's `import HeraldCore` is behind `#if canImport(HeraldCore)`.
  s.source_files  = 'Sources/HeraldCore/**/*.swift', 'Sources/Herald/**/*.swift'
  s.frameworks    = 'Foundation', 'Security'
  s.ios.frameworks = 'UIKit', 'UserNotifications', 'Network'
  s.osx.frameworks = 'AppKit', 'UserNotifications', 'Network'
end
