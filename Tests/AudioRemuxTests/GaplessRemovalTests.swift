@testable import AudioRemux
import ISOBMFF
import TestSupport
import XCTest

/// A cut drops the input's `iTunSMPB` item by its key, not by a byte search: another
/// freeform item that merely holds those eight bytes stays, byte for byte.
final class GaplessRemovalTests: XCTestCase {
    func testOnlyTheITunSMPBItemIsRemoved() {
        func freeform(_ name: String, _ text: String) -> ItemList.Item {
            ItemList.Item(key: .freeform(mean: "com.apple.iTunes", name: name), value: .text([text]))
        }
        var list = ItemList()
        list.items = [freeform("iTunSMPB", " 00000000 00000840 00000000 0000000000001000"),
                      freeform("NOTE", "mentions iTunSMPB"),
                      ItemList.Item(key: .code("©nam"), value: .text(["Title"]))]
        let userData = list.userData(replacingIn: nil) ?? []
        let kept = ItemList(userData: userData)
        let rewritten = Metadata.userData(removingGaplessFrom: userData)
        let after = ItemList(userData: rewritten)
        XCTAssertEqual(after.items.map(\.key), [.freeform(mean: "com.apple.iTunes", name: "NOTE"), .code("©nam")])
        XCTAssertEqual(after.items.map(\.originalBytes), kept.items.dropFirst().map(\.originalBytes))
        XCTAssertEqual(Metadata.userData(removingGaplessFrom: rewritten), rewritten, "nothing to remove: unchanged")
    }
}
