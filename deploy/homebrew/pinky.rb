# Homebrew formula for Pinky, built from source (SQLite goes through cgo,
# so Homebrew's compiler builds it on the Mac it runs on). To use it from a
# tap: copy this file into your tap's Formula/ folder, set url and sha256
# to a release's source archive, then `brew install pinky`.
class Pinky < Formula
  desc "Let AI agents use your phones, with you in charge"
  homepage "https://github.com/pinky-gateway/pinky"
  url "https://github.com/pinky-gateway/pinky/archive/refs/tags/v0.1.0.tar.gz"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"
  head "https://github.com/pinky-gateway/pinky.git", branch: "main"

  depends_on "go" => :build
  depends_on "android-platform-tools" => :recommended # adb, for Android phones

  def install
    vpkg = "github.com/pinky-gateway/pinky/internal/version"
    ldflags = "-s -w -X #{vpkg}.Version=v#{version}"
    %w[cli/cmd/pinky drivers/sim/cmd/pinky-driver-sim
       drivers/android/cmd/pinky-driver-android drivers/ios/cmd/pinky-driver-ios].each do |cmd|
      system "go", "build", *std_go_args(ldflags:, output: bin/File.basename(cmd)), "./#{cmd}"
    end
    system bin/"pinky", "man", man1
  end

  # brew services start pinky runs the daemon as a launchd agent; pinky
  # service install does the same without Homebrew.
  service do
    run [opt_bin/"pinky", "daemon"]
    keep_alive successful_exit: false
    log_path var/"log/pinky.log"
    error_log_path var/"log/pinky.log"
  end

  test do
    assert_match "pinky v#{version}", shell_output("#{bin}/pinky --version")
    ENV["PINKY_HOME"] = testpath/"home"
    assert_match "sim", shell_output("#{bin}/pinky version")
  end
end
