import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// Issue 11, point 18 (fragments): a `trun` without per-sample fields claiming one sample
/// per byte of a 4 MB file must not cost the 24+ bytes a sample it did (140 MB): the tool's
/// peak RSS stays within 64 MiB, measured by `/usr/bin/time`, for extract and probe.
final class FragmentMemoryCLITests: XCTestCase {
    let directory = TemporaryDirectory()

    override func tearDown() {
        directory.remove()
    }

    /// A fragmented file of about `megabytes` MB whose one `trun` has no per-sample fields
    /// and claims one sample per byte of the file: `size` 1 (the samples are in the mdat)
    /// or 0 (a `free` box pads the file so the claim stays within one sample per byte).
    static func claimingFragmentedFile(megabytes: Int, sampleSize: UInt32) -> [UInt8] {
        var initSegment = SyntheticFragmentedMovie(fragments: [])
        initSegment.trexDefaults = (1024, sampleSize)
        var file = initSegment.build()
        let count = megabytes << 20 - 4096
        if sampleSize == 0 {
            var free = BoxWriter()
            free.box("free") { $0.writeZeros(count) }
            file += free.bytes
        }
        func moof(dataOffset: Int32) -> [UInt8] {
            var w = BoxWriter()
            w.box(.moof) { moof in
                moof.fullBox("mfhd", version: 0, flags: 0) { $0.write(UInt32(1)) }
                moof.box("traf") { traf in
                    TrackFragmentHeaderBox(trackID: 1).write(to: &traf)
                    TrackFragmentDecodeTimeBox(baseMediaDecodeTime: 0).write(to: &traf)
                    TrackRunBox(sampleCount: UInt32(count), dataOffset: dataOffset).write(to: &traf)
                }
            }
            return w.bytes
        }
        let size = moof(dataOffset: 0).count
        file += moof(dataOffset: Int32(size + 8))
        var mdat = BoxWriter()
        mdat.box(.mdat) { $0.writeZeros(count * Int(sampleSize)) }
        return file + mdat.bytes
    }

    /// Runs the tool under `/usr/bin/time` and returns its exit status and peak RSS in KiB.
    func peakMemory(_ arguments: [String]) throws -> (status: Int32, kib: Int, stderr: String) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
            throw missingOracle("/usr/bin/time")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "peak-kib=%M", cliExecutable] + arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let line = stderr.split(separator: "\n").last { $0.hasPrefix("peak-kib=") } ?? ""
        return (process.terminationStatus, Int(line.dropFirst("peak-kib=".count)) ?? -1, stderr)
    }

    func testFragmentsClaimingOneSamplePerByteStayWithin64MiB() throws {
        let limitKiB = 64 << 10
        for size: UInt32 in [1, 0] {
            let bytes = Self.claimingFragmentedFile(megabytes: 4, sampleSize: size)
            XCTAssertLessThan(bytes.count, 5 << 20)
            let input = directory.write("claims-\(size).mp4", bytes)
            let output = directory.file("claims-\(size).m4a")
            let extract = try peakMemory(["--overwrite", input, output])
            print("extract, \(bytes.count) bytes, samples of \(size) byte: peak \(extract.kib) KiB")
            XCTAssertLessThanOrEqual(extract.kib, limitKiB, "extract, samples of \(size) byte: \(extract.stderr)")
            XCTAssertGreaterThan(extract.kib, 0)
            // One-byte samples are a (silly) valid track; empty ones are refused.
            XCTAssertEqual(extract.status, size == 1 ? 0 : 65, extract.stderr)
            let probe = try peakMemory(["probe", "--json", input])
            print("probe, \(bytes.count) bytes, samples of \(size) byte: peak \(probe.kib) KiB")
            XCTAssertLessThanOrEqual(probe.kib, limitKiB, "probe, samples of \(size) byte: \(probe.stderr)")
            XCTAssertEqual(probe.status, 0, probe.stderr)
        }
    }
}
