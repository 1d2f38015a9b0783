/// One `trak` of a movie: its headers, edit list and media information. The sample tables
/// are parsed on demand by ``sampleTable()``, since only the chosen track needs them.
public struct Track: Sendable {
    /// Box path of the `trak`, such as `moov/trak[2]`.
    public var path: String
    public var header: TrackHeaderBox
    public var editList: EditListBox?
    public var mediaHeader: MediaHeaderBox
    public var handler: HandlerBox
    public var soundMediaHeader: SoundMediaHeaderBox?
    /// The media information header box as found (`vmhd`, `smhd`, `nmhd`, `sthd`, `gmhd`,
    /// …), re-serialized with a 32-bit header, for copying a track as it is.
    public var mediaInformationHeader: [UInt8]?
    public var dataReferences: DataReferenceBox?
    /// The `stsd` (parsed eagerly: listing tracks needs the codec).
    public var sampleDescriptions: SampleDescriptionBox
    /// The number of samples `stsz`/`stz2` declares (0 when neither is present).
    public var declaredSampleCount: UInt32
    private var sampleTableBox: ByteReader

    public var trackID: UInt32 { header.trackID }
    public var handlerType: FourCC { handler.handlerType }
    public var isAudio: Bool { handler.handlerType == .soun }

    init(parsing trak: ByteReader) throws {
        var reader = trak
        var header: TrackHeaderBox?
        var editList: EditListBox?
        var media: ByteReader?
        while let (child, payload) = try reader.readBox(depth: 2) {
            var body = payload
            switch child.type {
            case .tkhd:
                guard header == nil else { throw duplicate(child) }
                header = try TrackHeaderBox(parsing: &body)
            case .edts:
                while let (edit, editPayload) = try body.readBox(depth: 3) {
                    guard edit.type == .elst else { continue }
                    guard editList == nil else { throw duplicate(edit) }
                    var elst = editPayload
                    editList = try EditListBox(parsing: &elst)
                }
            case .mdia:
                guard media == nil else { throw duplicate(child) }
                media = body
            default:
                break
            }
        }
        guard let header else { throw missing(.tkhd, in: trak) }
        guard var media else { throw missing(.mdia, in: trak) }
        self.path = trak.path
        self.header = header
        self.editList = editList

        var mediaHeader: MediaHeaderBox?
        var handler: HandlerBox?
        var information: ByteReader?
        let mdia = media
        while let (child, payload) = try media.readBox(depth: 3) {
            var body = payload
            switch child.type {
            case .mdhd:
                guard mediaHeader == nil else { throw duplicate(child) }
                mediaHeader = try MediaHeaderBox(parsing: &body)
            case .hdlr:
                guard handler == nil else { throw duplicate(child) }
                handler = try HandlerBox(parsing: &body)
            case .minf:
                guard information == nil else { throw duplicate(child) }
                information = body
            default:
                break
            }
        }
        guard let mediaHeader else { throw missing(.mdhd, in: mdia) }
        guard let handler else { throw missing(.hdlr, in: mdia) }
        guard var information else { throw missing(.minf, in: mdia) }
        self.mediaHeader = mediaHeader
        self.handler = handler

        var soundMediaHeader: SoundMediaHeaderBox?
        var mediaInformationHeader: [UInt8]?
        var dataReferences: DataReferenceBox?
        var sampleTable: ByteReader?
        let minf = information
        while let (child, payload) = try information.readBox(depth: 4) {
            var body = payload
            switch child.type {
            case .smhd:
                mediaInformationHeader = Self.rebuilt(child.type, body)
                soundMediaHeader = try SoundMediaHeaderBox(parsing: &body)
            case "vmhd", "nmhd", "sthd", "gmhd", "hmhd":
                mediaInformationHeader = Self.rebuilt(child.type, body)
            case .dinf:
                while let (entry, entryPayload) = try body.readBox(depth: 5) {
                    guard entry.type == .dref else { continue }
                    guard dataReferences == nil else { throw duplicate(entry) }
                    var dref = entryPayload
                    dataReferences = try DataReferenceBox(parsing: &dref)
                }
            case .stbl:
                guard sampleTable == nil else { throw duplicate(child) }
                sampleTable = body
            default:
                break
            }
        }
        guard let sampleTable else { throw missing(.stbl, in: minf) }
        self.soundMediaHeader = soundMediaHeader
        self.mediaInformationHeader = mediaInformationHeader
        self.dataReferences = dataReferences
        self.sampleTableBox = sampleTable

        var descriptions: SampleDescriptionBox?
        var declaredCount: UInt32 = 0
        var stbl = sampleTable
        while let (child, payload) = try stbl.readBox(depth: 5) {
            var body = payload
            switch child.type {
            case .stsd:
                guard descriptions == nil else { throw duplicate(child) }
                descriptions = try SampleDescriptionBox(parsing: &body)
            case .stsz, .stz2:
                try body.skip(8)  // Version and flags, then the constant size (stsz) or field size (stz2).
                declaredCount = try body.readUInt32()
            default:
                break
            }
        }
        guard let descriptions else { throw missing(.stsd, in: sampleTable) }
        self.sampleDescriptions = descriptions
        self.declaredSampleCount = declaredCount
    }

    private static func rebuilt(_ type: FourCC, _ payload: ByteReader) -> [UInt8] {
        var body = payload
        var writer = BoxWriter()
        writer.box(type) { $0.write(bytes: body.readRemainingBytes()) }
        return writer.bytes
    }

    /// Parses the track's sample tables (`stbl`). Costs time and memory in proportion to the
    /// number of samples; validate the result with ``SampleTable/init(boxes:fileLength:excluding:)``.
    public func sampleTable() throws -> SampleTableBoxes {
        try SampleTableBoxes(parsing: sampleTableBox, descriptions: sampleDescriptions)
    }

    /// The duration of the media in seconds, from `mdhd`.
    public var durationInSeconds: Double {
        mediaHeader.timescale == 0 ? 0 : Double(mediaHeader.duration) / Double(mediaHeader.timescale)
    }
}
