/// How `OfflineGeocoder` picks the place a person would write on a postcard.
///
/// The data has no feature codes (nothing marks a GeoNames PPLX "section of a populated
/// place"), so the rule uses population and distance alone. Every place of at least
/// 1,000 people claims a disk around its centre whose radius grows with the square root
/// of its population (a city's area grows roughly with its population), capped:
///
///     claimRadiusKm(population) = min(25, 0.01 × √population)
///
/// that is 10 km for a city of a million, 3.2 km for 100,000, 1 km for 10,000 and
/// 0.3 km for 1,000 (25 km from 6.25 million up). Places fall into population bands
/// (`bandMinimums`: 10 M+, 5–10 M, 2–5 M, 1–2 M, 500 k, 200 k, 100 k, 50 k, 20 k, 10 k,
/// 5 k, 2 k, 1 k). A position inside one or more disks goes to the nearest of the
/// claiming places of the most populous band among them. The Eiffel Tower is 1.4 km from
/// the centroid of "Paris 16 Passy" (159,386 people, 4 km disk) but also 4.0 km from
/// Paris (2.1 million, 14.6 km disk), whose band ranks higher: Paris.
///
/// A position no disk holds goes to the nearest place of all if it is within
/// `cityRadiusKm`; past that it has no city, and gets the country (and region) of the
/// nearest place when that is within `countryRadiusKm`, and nothing otherwise (open
/// ocean, Antarctica).
///
/// Every answer is thus the exact spherical nearest of a stated candidate set (the
/// claiming places of one band, or all places), and the tests check it by brute force.
/// The constants were chosen on fixtures/landmarks.csv, where anything from 0.008 to
/// 0.012 km per √person and caps of 20 to 25 km score 96–98 %.
enum PostcardRule {
    /// km of claim radius per √population.
    static let claimKmPerSqrtPopulation = 0.01
    /// The largest claim radius, km.
    static let claimRadiusCapKm = 25.0
    /// The nearest place of all names the city only within this distance, km.
    static let cityRadiusKm = 30.0
    /// The nearest place of all gives the country only within this distance, km.
    static let countryRadiusKm = 100.0

    /// Population bands, most populous first: band `b` holds the places with
    /// `bandMinimums[b] ≤ population <` `bandMinimums[b - 1]`.
    static let bandMinimums = [
        10_000_000, 5_000_000, 2_000_000, 1_000_000, 500_000, 200_000, 100_000,
        50_000, 20_000, 10_000, 5_000, 2_000, 1_000,
    ]

    /// The band of a place with `population` people; `nil` below the last band (no claim).
    static func band(population: Int) -> Int? {
        bandMinimums.firstIndex { population >= $0 }
    }

    /// The claim radius of a place with `population` people, km (0 below the last band: no claim).
    static func claimRadiusKm(population: Int) -> Double {
        guard band(population: population) != nil else { return 0 }
        return min(claimRadiusCapKm, claimKmPerSqrtPopulation * Double(population).squareRoot())
    }
}
