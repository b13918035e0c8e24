import Foundation

/// Distances on the sphere, as SpotStore measures them everywhere (spots, geocoding).
public enum GreatCircle {
    /// The mean Earth radius (IUGG), in km.
    public static let earthRadiusKm = 6371.0088

    /// The haversine distance in km between two positions in degrees: exact on the sphere,
    /// to the millimetre at short range and to a metre near antipodal points.
    public static func distanceKm(latitude lat1: Double, longitude lon1: Double, latitude lat2: Double, longitude lon2: Double) -> Double {
        let phi1 = lat1 * .pi / 180
        let phi2 = lat2 * .pi / 180
        let halfDeltaPhi = (lat2 - lat1) * .pi / 360
        let halfDeltaLambda = (lon2 - lon1) * .pi / 360
        let sinPhi = sin(halfDeltaPhi)
        let sinLambda = sin(halfDeltaLambda)
        let h = sinPhi * sinPhi + cos(phi1) * cos(phi2) * sinLambda * sinLambda
        return 2 * earthRadiusKm * asin(min(1, h.squareRoot()))
    }

    /// The haversine distance in km between `a` and `b`; altitudes are ignored.
    public static func distanceKm(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        distanceKm(latitude: a.latitude, longitude: a.longitude, latitude: b.latitude, longitude: b.longitude)
    }
}
