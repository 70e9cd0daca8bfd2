/// Every `folder.jpg` inkyfs makes is `bytes` long, so its size is known at a folder's first
/// listing, before the cover is made (a file manager's first visit shows it; one listed later
/// would be missing from the listing it caches): the worker encodes the cover to fit
/// (`ImageConversion.fitBytes`), the daemon pads it after its end marker (`PaddedImage`). A cover
/// 600 pixels high at quality 80 is 40-120 KB; a denser one comes a little softer.
public enum CoverSize {
    public static let bytes = 192 << 10
}
