/// A chapter: a title and where it starts.
///
/// Both chapter forms hold it: the QuickTime chapter track (``ChapterTrack``, one text
/// sample per chapter) and Nero's `udta/chpl` (``NeroChapters``).
public struct Chapter: Sendable, Equatable {
    /// The chapter's name, as the chapter track's text sample or Nero's `chpl` entry holds it.
    public var title: String
    /// Seconds from the start of the movie.
    public var start: Double

    /// A chapter called `title` that starts `start` seconds into the movie.
    public init(title: String, start: Double) {
        self.title = title
        self.start = start
    }
}
