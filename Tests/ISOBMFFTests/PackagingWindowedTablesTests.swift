import Foundation
import ISOBMFF
import TestSupport
import XCTest

/// The package's windowed route (issue 31): ``MovieOutline`` and ``WindowedSamples`` must
/// accept only what the regular route (``Movie``, ``MovieReader/samples(of:)``) accepts, and
/// give the same movie and the same samples, every field of every sample, in order and from
/// a cursor parked and resumed. Run over every fixture, damaged, corrupt and fuzz ones
/// included: where the windowed route refuses, the packager takes the regular one.
final class PackagingWindowedTablesTests: XCTestCase {
    func fixtureFiles() -> [String] {
        var files: [String] = []
        for folder in ["", "corrupt", "damaged", "fuzz", "fuzz-mux"] {
            let path = folder.isEmpty ? fixturesDirectory : fixture(folder)
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
                where !name.hasSuffix(".md") && !name.hasSuffix(".txt") {
                var isFolder: ObjCBool = false
                let file = path + "/" + name
                if FileManager.default.fileExists(atPath: file, isDirectory: &isFolder), !isFolder.boolValue {
                    files.append(file)
                }
            }
        }
        return files
    }

    func testWindowedRouteAcceptsOnlyWhatTheRegularRouteReadsAndGivesTheSameSamples() throws {
        var outlined = 0
        var windowedTracks = 0
        var comparedSamples = 0
        for file in fixtureFiles() {
            let source = MemoryByteSource(readFile(file))
            guard let outline = try? MovieOutline(reading: source) else { continue }
            outlined += 1
            let name = (file as NSString).lastPathComponent
            let movie: Movie
            do {
                movie = try Movie(reading: source)
            } catch {
                XCTFail("\(name): outlined, but the regular parse throws \(error)")
                continue
            }
            XCTAssertEqual(outline.movie.tracks.count, movie.tracks.count, name)
            XCTAssertEqual(outline.movie.userDataOffset, movie.userDataOffset, name)
            XCTAssertEqual(outline.movie.metadataOffset, movie.metadataOffset, name)
            XCTAssertEqual(outline.movie.userData, movie.userData, name)
            XCTAssertEqual(outline.movie.movieBoxRange, movie.movieBoxRange, name)
            let reader = MovieReader(movie: movie, source: source)
            for (number, (outlinedTrack, track)) in zip(outline.movie.tracks, movie.tracks).enumerated() {
                XCTAssertEqual(outlinedTrack.path, track.path, name)
                XCTAssertEqual(outlinedTrack.userDataOffset, track.userDataOffset, name)
                XCTAssertEqual(outlinedTrack.userData, track.userData, name)
                XCTAssertEqual(outlinedTrack.declaredSampleCount, track.declaredSampleCount, name)
                XCTAssertEqual(outlinedTrack.sampleDescriptions.entries.map(\.bytes),
                               track.sampleDescriptions.entries.map(\.bytes), name)
                XCTAssertEqual(outlinedTrack.sampleDescriptions.entries.map(\.fileOffset),
                               track.sampleDescriptions.entries.map(\.fileOffset), name)
                XCTAssertEqual(outlinedTrack.mediaInformationHeader, track.mediaInformationHeader, name)
                guard let windowed = try? WindowedSamples(track: outlinedTrack, tables: outline.tables[number],
                                                          movieBoxRange: outline.movie.movieBoxRange,
                                                          fileLength: outline.movie.fileLength, source: source)
                else { continue }
                windowedTracks += 1
                let index: SampleIndex
                do {
                    index = try reader.samples(of: reader.tracks[number])
                } catch {
                    XCTFail("\(name) track \(number + 1): windowed, but the regular route throws \(error)")
                    continue
                }
                XCTAssertEqual(windowed.count, index.count, name)
                XCTAssertEqual(windowed.totalDuration, index.totalDuration, name)
                XCTAssertEqual(windowed.presentationEnd, index.presentationEnd, name)
                XCTAssertEqual(windowed.compositionOffsetRange, index.compositionOffsetRange, name)
                XCTAssertEqual(windowed.startsWithSync, index.first?.isSync ?? true, name)
                XCTAssertEqual(windowed.sampleBytes, index.reduce(UInt64(0)) { $0 + UInt64($1.size) }, name)
                var cursor = windowed.makeCursor()
                var parked: [Int: WindowedSamples.Cursor] = [:]
                for (position, expected) in index.enumerated() {
                    if position == index.count / 2 || position == index.count - 1 { parked[position] = cursor.parked() }
                    let sample = try cursor.next(from: source)
                    XCTAssertEqual(sample, expected, "\(name) track \(number + 1) sample \(position)")
                    if sample != expected { break }
                    comparedSamples += 1
                }
                XCTAssertNil(try cursor.next(from: source), name)
                for (position, start) in parked {
                    var resumed = start
                    XCTAssertEqual(try resumed.next(from: source), index[position], "\(name) resumed at \(position)")
                }
            }
        }
        print("windowed route: \(outlined) files outlined, \(windowedTracks) tracks windowed, "
              + "\(comparedSamples) samples compared")
        // The route is taken for most fixtures: a test that compared nothing would prove nothing.
        XCTAssertGreaterThan(outlined, 30)
        XCTAssertGreaterThan(windowedTracks, 40)
        XCTAssertGreaterThan(comparedSamples, 10_000)
    }

    /// A table box left in the file but claiming more entries than it holds is refused by
    /// the windowed checks (the packager then reads the file the regular way).
    func testWindowedChecksRefuseACountPastTheBox() throws {
        var bytes = readFile(fixture("aac-h264-faststart.mp4"))
        let outline = try MovieOutline(reading: MemoryByteSource(bytes))
        let stsz = try XCTUnwrap(outline.tables[0].boxes.first { $0.type == .stsz })
        let count = Int(stsz.payload.lowerBound) + 8
        for i in 0..<4 { bytes[count + i] = 0xFF }
        let damaged = MemoryByteSource(bytes)
        let outlined = try MovieOutline(reading: damaged)
        XCTAssertThrowsError(try WindowedSamples(track: outlined.movie.tracks[0], tables: outlined.tables[0],
                                                 movieBoxRange: outlined.movie.movieBoxRange,
                                                 fileLength: outlined.movie.fileLength, source: damaged))
        XCTAssertThrowsError(try MovieReader(reading: damaged).samples(of: MovieReader(reading: damaged).tracks[0]))
    }
}
